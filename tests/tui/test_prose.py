from pooltui.tui.prose import reflow


def test_lines_join_into_paragraphs_and_items() -> None:
    text = (
        "vLLM v1, FCFS.\n\nOne GPU worker with a budget\nof 64 tokens.\n\nWhat to watch:\n"
        " - admission: each iteration serves\n   the running requests first;\n"
        " - preemption: the latest goes.\n"
    )
    assert reflow(text) == (
        "vLLM v1, FCFS.\n\nOne GPU worker with a budget of 64 tokens.\n\nWhat to watch:\n"
        " - admission: each iteration serves the running requests first;\n"
        " - preemption: the latest goes."
    )


def test_empty() -> None:
    assert reflow("") == ""
