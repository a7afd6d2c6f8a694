"""The classification run's config from the page's values (apart from the schema, which every page imports: this
one loads the compiled engine)."""
from sim.nets.training import ClassifierConfig


def make_config(v: dict) -> ClassifierConfig:
    """Regression always trains on squared error; the classification loss stays stored for later."""
    loss = "squared_error" if v["problem"] == "regression" else v["loss"]
    return ClassifierConfig(
        problem=v["problem"], dataset=v["dataset"], n=v["n"], noise=v["noise"], train_ratio=v["train_ratio"],
        val_ratio=v["val_ratio"], batch_size=v["batch_size"], features=v["features"], hidden=v["hidden"],
        activation=v["activation"], lr=v["lr"], regularization=v["regularization"], reg_rate=v["reg_rate"],
        loss=loss, optimizer=v["optimizer"], weight_decay=v["weight_decay"], dropout=v["dropout"], seed=v["seed"])
