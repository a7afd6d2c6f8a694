"""URL/widget schema of the optimiser lab: the race's surface, start and optimisers (each with its own learning
rate and betas), the momentum theory's α and β, the schedules' steps, the memory section's model size, Muon's
matrix and training comparison, and the Adam-against-AdamW problem."""
from sim.optim.optimizers import OPTIMIZERS, RACE_LRS, RACERS, SURFACES
from ui.schema import Param

LRS = (1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 10.0)
BETA2S = (0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999)
DECAYS = (0.0, 1e-3, 0.01, 0.03, 0.1, 0.3, 1.0)
SECTIONS = ("paths", "momentum", "schedules", "memory", "muon", "adamw", "race")
MU_DATA = ("spiral", "moons", "circle", "xor")
MU_MAX_STEPS = 600  # two trainings of 600 full-batch steps: about 2 s on one core
START_LIMIT = 10.0  # |x|, |y| a URL may give; the page holds the start to the chosen surface's bounds


def _with(choices: tuple, value: float) -> tuple:
    return tuple(sorted({*choices, float(value)}))


def hyper_params(opt: str) -> list[Param]:
    """Each optimiser's learning rate, betas (momentum's β, Adam's β₁ β₂, RMSprop's α) and weight decay."""
    out = []
    for h, default in OPTIMIZERS[opt].items():
        name = f"{opt}_{h}"
        if h == "lr":
            out.append(Param(name, "choice", float(default), choices=_with(LRS, default)))
        elif h in ("beta", "beta1", "alpha") or (h == "beta2" and opt == "lion"):
            out.append(Param(name, "float", float(default), lo=0.0, hi=0.999, step=0.001))
        elif h == "beta2":
            out.append(Param(name, "choice", float(default), choices=_with(BETA2S, default)))
        elif h == "weight_decay":
            out.append(Param(name, "choice", float(default), choices=_with(DECAYS, default)))
    return out


HYPER = {opt: hyper_params(opt) for opt in OPTIMIZERS}
DEFAULT_SURFACE = "quadratic"
START = SURFACES[DEFAULT_SURFACE].start

PAGE = "opt"  # widget keys, i18n keys and session keys of this page start with "opt."
SCHEMA = [
    Param("section", "choice", "paths", choices=SECTIONS, widget="segmented"),
    # the race
    Param("opts", "multi", tuple(o for o in OPTIMIZERS if o in ("sgd", "momentum", "adam")), choices=tuple(OPTIMIZERS)),
    Param("surface", "choice", DEFAULT_SURFACE, choices=tuple(SURFACES)),
    Param("kappa", "float", 10.0, lo=1.0, hi=100.0, step=1.0),  # condition number of the quadratic and the ravine
    Param("angle", "float", 0.0, lo=0.0, hi=90.0, step=5.0),  # rotation of the quadratic's axes, degrees
    Param("noise", "float", 0.0, lo=0.0, hi=1.0, step=0.05),  # gradient noise (stochastic gradients)
    Param("x", "float", START[0], lo=-START_LIMIT, hi=START_LIMIT, step=0.001),  # the start (a new surface: its own)
    Param("y", "float", START[1], lo=-START_LIMIT, hi=START_LIMIT, step=0.001),
    Param("steps", "int", 150, lo=10, hi=500, step=10),
    Param("at", "int", 10, lo=0, hi=500, step=1),  # the step whose update formulas are written out
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),
    *(p for ps in HYPER.values() for p in ps),
    # momentum theory on the quadratic (κ above): step α λₙ and β
    Param("m_step", "float", 1.0, lo=0.01, hi=4.0, step=0.01),
    Param("m_beta", "float", 0.5, lo=0.0, hi=0.99, step=0.01),
    # schedules
    Param("s_steps", "int", 1000, lo=100, hi=10_000, step=100),
    Param("s_warmup", "int", 100, lo=0, hi=2000, step=10),
    Param("s_floor", "float", 0.1, lo=0.0, hi=0.5, step=0.01),  # the final learning rate, a share of the peak
    Param("s_decay", "float", 0.8, lo=0.1, hi=0.95, step=0.05),  # WSD: the share of steps before the decay
    # the schedules race: the optimiser every run uses and its peak rate (Lion: on the spiral in 1000 steps the four
    # schedules end far apart)
    Param("s_opt", "choice", "lion", choices=RACERS),
    Param("s_lr", "choice", RACE_LRS["lion"], choices=_with(LRS, RACE_LRS["lion"])),
    # memory
    Param("billions", "float", 70.0, lo=0.001, hi=10_000.0, step=1.0),  # model size, billions of parameters
    # Muon: the momentum matrix (low rank + noise) and the training comparison
    Param("mu_rows", "int", 16, lo=2, hi=64, step=1),
    Param("mu_cols", "int", 32, lo=2, hi=64, step=1),
    Param("mu_rank", "int", 2, lo=1, hi=8, step=1),
    Param("mu_noise", "float", 0.05, lo=0.0, hi=1.0, step=0.01),
    Param("mu_seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("mu_data", "choice", "spiral", choices=MU_DATA),
    Param("mu_steps", "int", 300, lo=50, hi=MU_MAX_STEPS, step=50),
    Param("mu_lr", "choice", 0.05, choices=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2)),  # Muon's, on the hidden matrix
    Param("mu_adam_lr", "choice", 0.01, choices=(1e-3, 3e-3, 0.01, 0.03, 0.1)),  # AdamW's, on the rest
    # Adam + L2 against AdamW: feature scale, weight decay, learning rate, steps
    Param("d_scale", "choice", 10.0, choices=(1.0, 3.0, 10.0, 30.0)),
    Param("d_lambda", "choice", 0.1, choices=(0.01, 0.03, 0.1, 0.3)),
    Param("d_lr", "choice", 0.01, choices=(1e-3, 3e-3, 0.01, 0.03, 0.1)),
    Param("d_steps", "int", 1000, lo=100, hi=3000, step=100),
    # the race on a real model (and the schedules race): the MLP, its data and batches, the optimisers' rates
    Param("r_opts", "multi", RACERS, choices=RACERS),
    Param("r_data", "choice", "spiral", choices=MU_DATA),
    Param("r_width", "choice", 32, choices=(8, 16, 32, 64, 128)),  # neurons of each hidden layer
    Param("r_batch", "choice", 32, choices=(8, 16, 32, 64, 200)),  # 200: every point (full batch)
    Param("r_wd", "choice", 0.01, choices=(0.0, 1e-3, 0.01, 0.1)),  # AdamW's, Lion's and Muon's weight decay
    Param("r_steps", "int", 3000, lo=100, hi=20_000, step=100),  # the race ends there
    Param("r_speed", "int", 2, lo=1, hi=20, step=1),  # steps per tick (30 ticks a second)
    Param("r_seed", "int", 0, lo=0, hi=999_999, step=1),
    *(Param(f"r_{o}_lr", "choice", RACE_LRS[o], choices=_with(LRS, RACE_LRS[o])) for o in RACERS),
]
