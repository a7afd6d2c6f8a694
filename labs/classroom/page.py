"""Start a class: the class code, the LAN address and a QR code of the join link, projector-sized; then
predict-then-reveal (the teacher poses a question, students answer, a live histogram, the reveal runs the
experiment). Students who joined answer here. The class machinery is ui/classroom.py and server/classroom.py."""
import html
import io

import segno
import streamlit as st

from labs.classroom.board import board
from labs.classroom.questions import BANK, BankQuestion, questions
from labs.classroom.schema import PAGE, SCHEMA
from server import classroom as cr
from sim.core.text import plain
from sim.plots.palette import BLUE, INK
from ui import classroom, present
from ui.i18n import catalogue, lang, t
from ui.urlstate import PageState

ss = st.session_state
HIST_S = 1.0  # the teacher's histogram refreshes this often


def words(text: str) -> str:
    """A bank question's text is its i18n key (each student reads it in their language); a typed one is itself
    (in Markdown through plain(), as the characters it is; a bank text is a Markup, which plain() keeps)."""
    return t(text) if text in catalogue(lang()) else text


def big(text: str, size: str = "7rem") -> None:
    """Projector-sized text, shown as the characters it is (a class code, a question's words)."""
    st.html(f'<div data-testid="room-big" style="font-size:{size};font-weight:700;letter-spacing:0.12em;'
            f'line-height:1.1">{html.escape(text)}</div>')


def qr_png(link: str) -> bytes:
    buf = io.BytesIO()
    segno.make(link, error="m").save(buf, kind="png", scale=12, border=2, dark=INK)
    return buf.getvalue()


def start_view(state: PageState) -> None:
    left, right = st.columns(2)
    with left.container(border=True):
        st.subheader(t("room.teacher"))
        st.write(t("room.start_help"))
        if st.button(t("room.start"), type="primary", icon=":material/school:", key="room.start_btn"):
            try:
                classroom.start("classroom", classroom.current_params(classroom.lab_pages()["classroom"]) or {})
            except cr.ClassroomError as e:
                st.error(classroom.problem_text(e.reason), icon=":material/error:")
            else:
                st.rerun()
    with right.container(border=True):
        st.subheader(t("room.student"))
        raw = st.text_input(t("room.join_code"), key="room.code_in", max_chars=12)
        if st.button(t("room.join"), icon=":material/login:", key="room.join_btn") and raw:
            if classroom.join(raw):
                st.rerun()
            st.error(t("room.problem.bad_code", code=raw[:12]), icon=":material/error:")


def join_panel() -> None:
    code = classroom.code()
    link = cr.join_link(st.context.url or "", code, cr.lan_address())
    left, right = st.columns([3, 2])
    with left:
        st.caption(t("room.code_label"))
        big(code)
        st.markdown(t("room.join_at", link=link))
        st.caption(t("room.lan", addr=cr.lan_address()))
    right.image(qr_png(link), caption=t("room.qr_caption"), width=360)


def pose_panel(state: PageState) -> None:
    bank = questions(state.widget("bank"))
    left, right = st.columns(2)
    with left.container(border=True):
        pick = st.radio(t("room.pick"), range(len(bank)), format_func=lambda i: t(f"room.q.{bank[i].id}"),
                        key="room.pick_q")
        if st.button(t("room.pose"), key="room.pose_bank", icon=":material/help:", disabled=pick is None):
            q = bank[pick]
            pose(f"room.q.{q.id}", [f"room.q.{q.id}.{o}" for o in q.options])
    with right.container(border=True):
        text = st.text_input(t("room.own_text"), key="room.own_q", max_chars=cr.MAX_TEXT)
        opts = st.text_area(t("room.own_options"), key="room.own_opts", height=110,
                            max_chars=cr.MAX_OPTIONS * (cr.MAX_TEXT + 1))  # an option a line
        if st.button(t("room.pose"), key="room.pose_own", icon=":material/edit:"):
            pose(text, opts.splitlines())


def pose(text: str, options: list[str]) -> None:
    try:
        classroom.room().pose(classroom.code(), ss["_cls.secret"], text, options)
    except cr.BadInput:
        st.error(t("room.bad_question", n=cr.MAX_OPTIONS), icon=":material/error:")
    except cr.ClassroomError as e:
        st.error(classroom.problem_text(e.reason), icon=":material/error:")
    else:
        st.rerun()


def bank_question(text: str) -> BankQuestion | None:
    """The bank question posed with this text (its i18n key); None for a question the teacher typed."""
    return next((q for q in BANK if text == f"room.q.{q.id}"), None)


def right_answer(question: cr.Question) -> None:
    """After the reveal, a bank question's right option."""
    if question.revealed and (found := bank_question(question.text)):
        st.markdown(t("room.right", a=t(f"room.q.{found.id}.{found.answer}")))


def reveal(question: cr.Question) -> None:
    """Reveal: answers close, and a bank question's experiment opens in its lab (the class follows there)."""
    classroom.room().reveal(classroom.code(), ss["_cls.secret"])
    found = bank_question(question.text)
    lab = classroom.lab_pages().get(found.lab) if found else None
    if lab is None:
        st.rerun()
    classroom.show_to_class({"lab": found.lab, "params": {**(classroom.current_params(lab) or {}), **found.reveal}},
                            classroom.lab_pages(), "classroom")


def histogram(q: cr.Question, counts: dict[str, int], key: str) -> None:
    rows = {"option": [words(o) for o in q.options], "answers": [counts.get(o, 0) for o in q.options]}
    from ui.charts import bar_chart  # the presenter style, like every chart (ui/charts.py)
    bar_chart(st, rows, x="answers", y="option", color=BLUE, height=60 + 60 * len(q.options), key=key)


@st.fragment(run_every=HIST_S)
def teacher_live() -> None:
    """Students connected and the question posed: the number of answers; the count per option only once revealed
    (the projector must not show a vote while it runs: it sways it), or to the teacher alone when they peek (not in
    the presenter view)."""
    try:
        state = classroom.room().state(classroom.code())
        counts = classroom.room().histogram(classroom.code(), ss["_cls.secret"])
        n = classroom.room().students(classroom.code(), ss["_cls.secret"])
    except cr.ClassroomError as e:
        st.warning(classroom.problem_text(e.reason), icon=":material/warning:")
        return
    st.markdown(t("room.students", n=n))
    q = state.question
    if q is None:
        st.info(t("room.no_question"), icon=":material/help:")
        return
    st.subheader(plain(words(q.text)))
    peek = not present.presenting() and st.toggle(t("room.peek"), key="room.peek", help=t("room.peek_help"))
    if q.revealed or peek:
        histogram(q, counts, "room.hist")
    st.caption(t("room.answers" if q.open else "room.answers_closed", n=sum(counts.values())))
    right_answer(q)
    bar = st.container(horizontal=True)
    # both buttons stay in their places (disabled once used): a button that went away would move its neighbour
    if bar.button(t("room.reveal"), type="primary", icon=":material/visibility:", key="room.reveal",
                  disabled=q.revealed):
        reveal(q)
    if bar.button(t("room.close_q"), icon=":material/close:", key="room.close_q", disabled=not q.open):
        classroom.room().close_question(classroom.code(), ss["_cls.secret"])
        st.rerun()
    # the class's answers so far, every question of the class (refreshed with the counts)
    bar.download_button(t("room.csv"), data=answers_file(), file_name=f"class-{classroom.code()}-answers.csv",
                        mime="text/csv", icon=":material/download:", key="room.csv", on_click="ignore")


def answers_file() -> str:
    return classroom.room().answers_csv(classroom.code(), ss["_cls.secret"], lambda x: str(words(x)),
                                        lambda n: str(t("room.student_n", n=n)))


def teacher_view(state: PageState) -> None:
    # the teacher's own screen may show the class at a glance instead (not the projector: no such view there); the
    # class stays on the page it was on (schema.QUIET)
    if not present.presenting() and state.widget("view", fold=False, label_visibility="collapsed") == "board":
        board(classroom.lab_pages(), "classroom")
        return
    join_panel()
    st.divider()
    st.subheader(t("room.ask"))
    teacher_live()
    pose_panel(state)
    if st.button(t("room.end"), icon=":material/stop_circle:", key="room.end_btn"):
        classroom.end()
        st.rerun()


def student_view() -> None:
    code = classroom.code()
    st.markdown(t("room.in_class", code=code))
    try:
        q = classroom.room().state(code).question
    except cr.ClassroomError:
        return  # the class panel (ui/classroom.py) says what went wrong
    if q is None:
        st.info(t("room.waiting"), icon=":material/hourglass_top:")
        return
    big(words(q.text), "2.4rem")
    try:  # what this student answered, from the class (a reload shows it too)
        student = classroom.student_id()
        mine = classroom.room().my_answer(code, student, q.id)
    except cr.ClassroomError:
        return
    if q.revealed:
        st.success(t("room.revealed", a=words(mine) if mine else "–"), icon=":material/visibility:")
        counts = classroom.room().counts(code)
        if counts is not None:
            histogram(q, counts, "room.hist_class")
        right_answer(q)
        return
    if q.closed:
        st.info(t("room.closed", a=words(mine) if mine else "–"), icon=":material/lock:")
        return
    bar = st.container(horizontal=True)
    for i, option in enumerate(q.options):
        if bar.button(plain(words(option)), key=f"room.opt.{i}", type="primary" if option == mine else "secondary"):
            try:
                classroom.room().answer(code, student, q.id, option)
                mine = option
            except cr.ClassroomError as e:
                st.warning(classroom.problem_text(e.reason), icon=":material/warning:")
    if mine:
        st.caption(t("room.your_answer", a=words(mine)))


state = PageState(PAGE, SCHEMA)
with state.frame(t("room.title"), t("room.intro")):
    if classroom.is_teacher():
        teacher_view(state)
    elif classroom.is_student():
        student_view()
    else:
        start_view(state)
