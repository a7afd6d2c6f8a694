"""Binds a page schema to Streamlit: widgets, the URL (?lang=en&dataset=spiral&seed=3) and notices."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from sim.core.text import md
from ui import layout, present
from ui.code_button import code_button, code_fold
from ui.i18n import lang, t
from ui.schema import Param, check_value, read_query, write_query


def set_values(page: str, schema: list[Param], values: dict[str, Any]) -> None:
    """Set several of a page's parameters at once (a preset button's callback, before the page reruns).

    Each value is checked against the schema as a URL value would be, kept as the page's value, and its
    widget shows it on the next run (PageState.widget restores a widget from the kept values).
    """
    params = {p.name: p for p in schema}
    checked = {name: check_value(params[name], value) for name, value in values.items()}
    st.session_state.setdefault(f"_vals.{page}", {}).update(checked)
    for name in checked:
        st.session_state.pop(f"{page}.{name}", None)


class PageState:
    """The values of one page's parameters, kept across reruns and page switches."""

    def __init__(self, page: str, schema: list[Param]):
        self.page, self.schema = page, schema
        self.params = {p.name: p for p in schema}
        store = f"_vals.{page}"
        if store not in st.session_state:  # first visit in this session: the URL decides
            values, rejected = read_query(schema, dict(st.query_params))
            st.session_state[store] = values
            for name, raw in rejected:
                st.warning(t("url.rejected", name=t(f"{page}.{name}"), value=md(raw, 40)),
                           icon=":material/warning:")
        self.values: dict[str, Any] = st.session_state[store]
        self.fold = None  # the presenter view's controls button (frame), where widget() then draws
        self._folded = 0  # inside a controls() block (already behind that button)
        for p in schema:  # a widget changed since the last run: its new value counts from the top
            if self.key(p.name) in st.session_state and p.kind != "ints":
                value = st.session_state[self.key(p.name)]
                if p.kind == "choice" and value not in p.choices:
                    continue  # a label of the other language (a choice box sent what it showed before a switch)
                self.values[p.name] = tuple(c for c in p.choices if c in value) if p.kind == "multi" else value

    def key(self, name: str) -> str:
        return f"{self.page}.{name}"

    def widget(self, name: str, container=st, options: tuple | None = None, fold: bool = True, **kw) -> Any:
        """Draw the standard widget for a parameter and record its value.

        `options` narrows a choice to the values that make sense now (e.g. datasets per problem).
        A parameter named in `?hide=` is not drawn: its value (from the URL, the class or its default) counts.
        In the presenter view the widget goes behind the frame's one controls button (unless `fold` is False, as
        for a switch between a lab's sections), on its own when it is not inside a `controls()` block.
        """
        p, key = self.params[name], self.key(name)
        choices = options or p.choices
        if name in present.hidden():
            if p.kind == "choice" and self.values[name] not in choices:
                self.values[name] = choices[0]  # as the widget would have shown it
            return self.values[name]
        if fold and self.fold is not None and not self._folded and not present.in_fragment():
            container = self.fold
        # widget state is dropped when the page is left, so it is restored from the kept values
        if key not in st.session_state or (p.kind == "choice" and st.session_state[key] not in choices):
            value = self.values[name] if p.kind != "choice" or self.values[name] in choices else choices[0]
            st.session_state[key] = list(value) if p.kind == "multi" else value
        label = kw.pop("label", t(key))

        def choice_text(c) -> str:
            """A choice's text. Streamlit also passes what a box sent from before a language switch (its label in the
            other language), which has no text of its own."""
            return t(f"{key}.{c}") if c in p.choices else str(c)

        if p.kind == "int" and p.hi - p.lo > 1000:
            value = container.number_input(label, p.lo, p.hi, step=p.step, key=key, **kw)
        elif p.kind in ("int", "float"):
            value = container.slider(label, p.lo, p.hi, step=p.step, key=key, **kw)
        elif p.kind == "bool":  # its label on as many lines as a narrow column needs, never cut short
            value = container.toggle(label, key=key, wrap=True, **kw)
        elif p.kind == "text":
            value = container.text_input(label, key=key, max_chars=p.max_len, **kw)
        elif p.kind == "multi":
            value = container.pills(label, p.choices, selection_mode="multi", key=key,
                                    format_func=choice_text, **kw)
            value = tuple(c for c in p.choices if c in (value or ()))
        elif p.widget == "segmented":
            value = container.segmented_control(label, choices, key=key, required=True,
                                                format_func=choice_text, **kw)
        elif isinstance(p.choices[0], str):
            value = container.selectbox(label, choices, key=key, format_func=choice_text, **kw)
        else:
            value = container.select_slider(label, choices, key=key, **kw)
        self.values[name] = value
        return value

    def set(self, name: str, value: Any) -> None:
        """Record a value chosen by a custom widget (such as the hidden-layer editor)."""
        self.values[name] = value

    def query(self) -> dict[str, str]:
        return {"lang": lang(), **write_query(self.schema, self.values), **present.carry()}

    def sync_url(self) -> None:
        """Write language and every parameter into the address bar (only when they changed)."""
        if dict(st.query_params) != self.query():
            st.query_params.from_dict(self.query())

    def link(self) -> str:
        """A shareable link that reproduces this page's settings."""
        base = (st.context.url or "").split("?")[0]
        return f"{base}?{urlencode(self.query(), safe=',')}"

    def sections(self, title: str, intro: str, views: dict[str, Callable[[PageState], None]],
                 about: str | None = None, switch: str = "section") -> None:
        """A lab of several sections: its frame, a switch for its `switch` parameter, and that section's view.

        One section at a time, not tabs: a hidden tab would still re-render its charts on every live update.
        """
        with self.frame(title, intro, about):
            with st.container(key=layout.SECTIONS):  # one row on every screen (ui.layout.STYLE)
                section = self.widget(switch, fold=False, label_visibility="collapsed")
            views[section](self)

    @contextmanager
    def controls(self, container=None, expander: str | None = None, expanded: bool = False) -> Iterator[None]:
        """A block of a lab's controls (widgets with their columns, captions and buttons), drawn in `container`
        or in an expander labelled `expander`.

        In the presenter view the whole block goes behind the frame's one controls button (and no expander is
        made), so the page keeps no empty column, expander or caption whose widget has gone. A fragment's own
        controls stay where they are: a fragment may not draw outside itself.
        """
        if self.fold is None or self._folded or present.in_fragment():
            if expander is not None:
                container = (st if container is None else container).expander(expander, expanded=expanded)
            with container if container is not None else nullcontext():
                yield
            return
        self._folded += 1
        try:
            with self.fold:
                yield
        finally:
            self._folded -= 1

    def stage(self, ratio: tuple[int, int] = layout.STAGE) -> tuple:
        """(figure, controls) of a section (ui.layout.stage): draw the main controls into `controls` with
        `widget(..., container=controls)` (they stay on view, in the presenter view too) and the rest with
        `more(controls)`; the main figure into `figure`."""
        return layout.stage(ratio)

    @contextmanager
    def more(self, container) -> Iterator[None]:
        """The section's other controls, folded under "More settings" in `container` (the presenter view: behind
        its controls button)."""
        with self.controls(container, expander=t("layout.more")):
            yield

    @contextmanager
    def frame(self, title: str, intro: str, about: str | None = None) -> Iterator[None]:
        """The frame of a lab page: the title on one line, the one-sentence intro and "copy link" around the body,
        then `about` (the longer explanation) folded at the end, then the URL written. The presenter view folds the
        intro too.

        The link is written last (in its slot at the top) so it holds every value the body's widgets gave,
        also when the body ends early.
        """
        # one row, also on a phone (a horizontal container does not stack as columns do): the title takes what the
        # buttons leave, cut short with "…" when it must (ui.layout.STYLE); the presenter view's controls button sits
        # beside the link. The link's button is on the page from the start (its text is filled last): a button that
        # came only at the end of each run would change the row's height and jolt the page below it
        row = st.container(horizontal=True, vertical_alignment="center", gap="small", key=layout.HEADER)
        row.title(title, anchor=False, width="stretch")
        if present.presenting():
            self.fold = present.controls_box(row)
            present.shortcuts()
        link = row.popover(t("url.copy_link"), icon=":material/link:").empty()
        code = row.empty()  # the Code button (ui.code_button), where the page has a run to write out
        if present.presenting():  # the projector's height is the figure's: the teacher says it, the fold keeps it
            about = "\n\n".join(filter(None, (intro, about)))
        else:
            st.caption(intro)
        yield
        if about:
            with st.expander(t("layout.about"), icon=":material/menu_book:"):
                st.markdown(about)
        link.code(self.link(), language=None)
        code_fold(code_button(code, self.page, self.values, self.link()))
        self.sync_url()
