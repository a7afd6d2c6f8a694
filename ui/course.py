"""A course text's claim beside the app's own figure: one bordered box, what the text says on the left and what
the lab computes on the right. Used wherever a lab corrects or completes a course text (the GPU lab's SRAM, the
attention lab's dot-product variance, the language-model lab's Chinchilla and GPT-3 figures, ...)."""
import streamlit as st


def course_note(says: str, shows: str, container=st) -> None:
    """Both texts are already translated and filled in by the lab; every number in `shows` is computed."""
    box = container.container(border=True)
    left, right = box.columns(2, gap="medium")
    left.markdown(says)
    right.markdown(shows)
