"""The generalisation lab's live runs (capacity, regularisation and label-noise sections), on ui.live_run."""
from collections.abc import Callable

import streamlit as st

from sim.fitting.fit import FitConfig, FitTrainer
from ui import live_run
from ui.i18n import t
from ui.live_plots import show_frames
from ui.player import Player

ss = st.session_state


def restore_best(name: str) -> None:
    player = ss[f"gen.{name}.player"]
    player.pause()
    with player.lock:
        player.model.restore_best()
    player.refresh()
    st.rerun()  # the whole page follows the restored model


def run_status(trainer: FitTrainer) -> str:
    if trainer.diverged:
        return t("gen.run.diverged", best=trainer.best_epoch)
    if trainer.stopped:
        return t("gen.run.stopped", epoch=trainer.epoch, best=trainer.best_epoch)
    if trainer.finished:
        return t("gen.run.finished", epoch=trainer.epoch)
    return ""


def make_player(trainer: FitTrainer) -> Player:
    return Player(trainer.step, lambda: {}, lambda: trainer.finished, model=trainer)  # a frame per `speed` epochs


def live_section(name: str, config: FitConfig, data_key: tuple, make: Callable[[], tuple], speed: int,
                 draw: Callable[[FitTrainer], dict]) -> None:
    """One section's run (a new one when its settings or its data changed): Play / Pause / Step / Restore best /
    Reset and its live panels, drawn by draw(trainer)."""
    player = live_run.current_player(f"gen.{name}", (config, data_key),
                                     lambda: make_player(FitTrainer(config, *make())))
    player.speed = speed
    trainer = player.model
    player.snapshot = lambda: draw(trainer)  # what a frame shows may change without the model changing

    def restore_button(bar) -> None:
        bar.button(t("gen.restore"), on_click=restore_best, args=(name,), icon=":material/history:",
                   disabled=trainer.finished or trainer.best_epoch == trainer.epoch, key=f"gen.{name}.restore",
                   help=t("gen.restore_help"))

    def messages() -> None:
        message = run_status(trainer)
        if message:
            (st.error if trainer.diverged else st.success)(message)

    def show(frames: list[dict], seq: int, status: str) -> None:
        status = ("diverged" if trainer.diverged else "paused") if status == "stopped" else status
        show_frames(frames, key=f"gen.{name}.view", seq=seq, status=status)

    live_run.live_view("gen", f"gen.{name}", player, show, lambda: trainer.finished, extra_buttons=restore_button,
                       messages=messages, n=speed)
