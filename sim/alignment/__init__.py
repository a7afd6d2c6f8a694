"""From a pretrained model to an assistant: a built-in task with a known rule (task.py), the preference losses
(losses.py) and the pipeline pretraining -> SFT -> reward model -> DPO / RLHF on the tiny GPT of sim.transformers,
as one live run (pipeline.py)."""
from sim.alignment.losses import bradley_terry_loss, dpo_loss

__all__ = ["bradley_terry_loss", "dpo_loss"]
