"""Learning from a reward instead of a label: a softmax policy over a few arms (actions), each paying 1 with its own
hidden chance, trained by the policy gradient (REINFORCE with a running-mean baseline). No one says which arm is
right; the policy moves towards actions whose reward beat the baseline."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PAYOUTS = (0.2, 0.5, 0.8)  # each arm's chance of reward 1


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def policy_gradient(theta: np.ndarray, action: int, advantage: float) -> np.ndarray:
    """∇_θ of advantage · log π_θ(action), π = softmax(θ): advantage · (onehot(action) − π)."""
    g = -softmax(theta)
    g[action] += 1.0
    return advantage * g


@dataclass(frozen=True)
class BanditRun:
    probs: np.ndarray  # (steps + 1, arms) the policy before each step and after the last
    actions: np.ndarray  # (steps,)
    rewards: np.ndarray  # (steps,)

    def mean_reward(self, window: int = 20) -> np.ndarray:
        """The moving mean of the rewards received (the last `window` steps)."""
        c = np.cumsum(np.concatenate([[0.0], self.rewards]))
        k = np.arange(1, len(self.rewards) + 1)
        lo = np.maximum(0, k - window)
        return (c[k] - c[lo]) / (k - lo)


def train_bandit(steps: int, lr: float, seed: int, payouts: tuple[float, ...] = PAYOUTS) -> BanditRun:
    rng = np.random.default_rng(seed)
    theta, baseline = np.zeros(len(payouts)), 0.0
    probs, actions, rewards = [softmax(theta)], [], []
    for t in range(steps):
        a = int(rng.choice(len(payouts), p=softmax(theta)))
        r = float(rng.random() < payouts[a])
        theta = theta + lr * policy_gradient(theta, a, r - baseline)
        baseline += (r - baseline) / (t + 1)
        probs.append(softmax(theta))
        actions.append(a)
        rewards.append(r)
    return BanditRun(np.array(probs), np.array(actions), np.array(rewards))


def result(run: BanditRun, payouts: tuple[float, ...] = PAYOUTS) -> tuple[str, dict]:
    """What the run ends with (an i18n key and its params): the arm the policy now prefers, the best arm (by the
    hidden payouts) or another one, judged on the chances as shown (whole percents); and the mean reward it earned,
    beside what choosing at random would earn."""
    last = np.round(100 * run.probs[-1]).astype(int)
    best, fav = int(np.argmax(payouts)), int(np.argmax(last))
    params = {"steps": len(run.rewards), "best": best + 1, "top": f"{payouts[best]:.1f}", "p": f"{last[best]}%",
              "fav": fav + 1, "fav_pay": f"{payouts[fav]:.1f}", "fav_p": f"{last[fav]}%",
              "reward": f"{run.rewards.mean():.2f}", "random": f"{np.mean(payouts):.2f}"}
    return ("asst.sig.rl_best" if last[best] >= last[fav] else "asst.sig.rl_other"), params
