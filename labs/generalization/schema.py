"""URL/widget schema of the generalisation lab."""
from sim.fitting.generalization import MAX_DEGREE
from ui.schema import Param

LEARNING_RATES = (0.001, 0.003, 0.01, 0.03)  # Adam step sizes
L2_RATES = (0.0, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)  # the article's typical λ is 1e-4..1e-2
L1_RATES = (0.0, 0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003)
WIDTHS = (4, 8, 16, 32, 64, 128)  # neurons in each of the two hidden layers
NOISE_DATASETS = ("moons", "circle", "xor", "gauss")  # two-class sets of sim.core.data for the label-noise run

PAGE = "gen"  # widget keys, i18n keys and session keys of this page start with "gen."
SCHEMA = [
    Param("section", "choice", "split", choices=("split", "leakage", "capacity", "regularization", "label_noise"),
          widget="segmented"),
    # the 1-D data of the split, CV, capacity and regularisation views
    Param("n", "int", 40, lo=20, hi=300, step=5),
    Param("noise", "float", 0.5, lo=0.0, hi=1.5, step=0.05),
    Param("train", "float", 0.6, lo=0.6, hi=0.8, step=0.05),  # the notes' ranges: 60-80 % training,
    Param("val", "float", 0.2, lo=0.1, hi=0.2, step=0.05),  # 10-20 % validation (the test set takes the rest)
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),
    # cross-validation and the polynomial
    Param("k", "int", 5, lo=2, hi=10, step=1),
    Param("degree", "int", 3, lo=1, hi=MAX_DEGREE, step=1),
    # the network trained live
    Param("width", "choice", 64, choices=WIDTHS),
    Param("lr", "choice", 0.003, choices=LEARNING_RATES),
    Param("patience", "int", 300, lo=0, hi=1000, step=50),  # early stopping; 0 switches it off
    Param("speed", "choice", 5, choices=(1, 5, 10, 20, 50)),  # epochs per animation frame
    Param("l2", "choice", 0.0, choices=L2_RATES),
    Param("l1", "choice", 0.0, choices=L1_RATES),
    Param("dropout", "float", 0.0, lo=0.0, hi=0.8, step=0.05),
    # leakage: which scenario the section shows, and each scenario's knob (at its lowest value nothing leaks)
    Param("scenario", "choice", "scaling", choices=("scaling", "group", "time")),
    Param("strength", "float", 10.0, lo=1.0, hi=20.0, step=0.5),  # noise of the test hospital's scanner
    Param("records", "int", 10, lo=1, hi=20, step=1),  # records per person
    Param("spell", "int", 15, lo=2, hi=30, step=1),  # mean length of a weather spell, days (2: no persistence)
    # label noise
    Param("dataset", "choice", "moons", choices=NOISE_DATASETS),
    Param("flip", "float", 0.2, lo=0.0, hi=0.5, step=0.05),
]
