"""URL/widget schema of the regression lab."""
from sim.fitting.regression import LOSSES
from sim.fitting.regression_data import DATASETS
from ui.schema import Param

LEARNING_RATES = (0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.5, 1.0, 3.0, 10.0, 100.0)
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, "full")

PAGE = "reg"  # widget keys, i18n keys and session keys of this page start with "reg."
SCHEMA = [
    Param("dataset", "choice", "linear", choices=DATASETS),
    Param("n", "int", 30, lo=2, hi=1000, step=1),
    Param("noise", "float", 0.3, lo=0.0, hi=1.0, step=0.05),  # in the set's own unit
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("outliers", "int", 0, lo=0, hi=5, step=1),
    Param("outlier_size", "float", 5.0, lo=-10.0, hi=10.0, step=0.5),  # in the set's own unit
    Param("degree", "int", 1, lo=1, hi=12, step=1),
    Param("standardize", "bool", False),
    Param("loss", "choice", "mse", choices=LOSSES),
    Param("delta", "float", 1.0, lo=0.1, hi=5.0, step=0.1),  # Huber's δ, in the set's own unit
    Param("solver", "choice", "closed_form", choices=("closed_form", "gd"), widget="segmented"),
    Param("lr", "choice", 0.1, choices=LEARNING_RATES),
    Param("batch_size", "choice", "full", choices=BATCH_SIZES),
    Param("speed", "choice", 1, choices=(1, 2, 5, 10, 20)),  # epochs per animation frame
    Param("panel", "choice", "residuals", choices=("residuals", "surface", "outliers", "step"), widget="segmented"),
    Param("step_data", "choice", "example", choices=("example", "current"), widget="segmented"),
]
