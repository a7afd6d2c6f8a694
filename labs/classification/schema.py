"""The URL/widget schema of each page (name, kind, default, range or choices)."""
from sim.core.data import CLASSIFICATION_DATASETS, FEATURES, REGRESSION_DATASETS
from ui.schema import Param

# TensorFlow Playground's menus of learning and regularisation rates
LEARNING_RATES = (0.00001, 0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
REG_RATES = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
WEIGHT_DECAYS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1)  # AdamW's decoupled weight decay (torch's default 0.01)

PAGE = "cls"  # widget keys, i18n keys and session keys of this page start with "cls."
SCHEMA = [
    Param("problem", "choice", "classification", choices=("classification", "regression")),
    Param("dataset", "choice", "circle", choices=CLASSIFICATION_DATASETS + REGRESSION_DATASETS),
    Param("n", "int", 500, lo=100, hi=2000, step=50),
    Param("noise", "float", 0.0, lo=0.0, hi=0.5, step=0.05),
    # the training points (as before val_ratio); the default 70 % and the held-out half below make 70 / 15 / 15, a
    # split the course notes teach (60-80 % / 10-20 % / 10-20 %)
    Param("train_ratio", "float", 0.7, lo=0.1, hi=0.9, step=0.1),
    # the held-out points' share for validation, the rest is the test set: any old train_ratio stays valid
    Param("val_ratio", "float", 0.5, lo=0.1, hi=0.9, step=0.1),
    Param("batch_size", "int", 10, lo=1, hi=30, step=1),
    Param("features", "multi", ("x1", "x2"), choices=FEATURES),
    Param("hidden", "ints", (4, 2), lo=1, hi=8, max_len=6),
    Param("activation", "choice", "tanh", choices=("relu", "tanh", "sigmoid", "linear")),
    Param("lr", "choice", 0.03, choices=LEARNING_RATES),
    Param("regularization", "choice", "none", choices=("none", "l1", "l2")),
    Param("reg_rate", "choice", 0.0, choices=REG_RATES),
    Param("loss", "choice", "cross_entropy", choices=("cross_entropy", "squared_error")),
    Param("optimizer", "choice", "sgd", choices=("sgd", "momentum", "adam", "adamw")),
    # AdamW's decoupled decay; 0.01 (torch's default) is what AdamW runs used before it was shown
    Param("weight_decay", "choice", 0.01, choices=WEIGHT_DECAYS),
    Param("dropout", "float", 0.0, lo=0.0, hi=0.8, step=0.05),
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("speed", "choice", 1, choices=(1, 2, 5, 10)),  # × labs.classification.run.EPOCHS_PER_FRAME epochs a frame
    Param("threshold", "float", 0.5, lo=0.0, hi=1.0, step=0.01),
    Param("discretize", "bool", False),
    Param("show_test", "bool", False),  # shows the validation points; the old name keeps old links working
    Param("panel", "choice", "eval", choices=("eval", "why_ce", "features", "download"), widget="segmented"),
    Param("ce_p", "float", 0.9, lo=0.01, hi=0.99, step=0.01),  # the "why cross-entropy" probability
]
