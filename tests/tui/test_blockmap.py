"""The block map widget on its own: Line API (only visible rows rendered), cells, clicks."""

from __future__ import annotations

from textual.app import App, ComposeResult

from pooltui.tui.synthetic import synthetic_pool
from pooltui.tui.widgets.blockmap import CELL, GUTTER, BlockMapView

BIG = synthetic_pool(100_000, holders=3000)


class MapApp(App[None]):
    CSS = "BlockMapView { height: 1fr; max-height: 100%; }"

    def __init__(self) -> None:
        super().__init__()
        self.clicked: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        yield BlockMapView(BIG)

    def on_block_map_view_block_clicked(self, message: BlockMapView.BlockClicked) -> None:
        self.clicked.append((message.pool, message.block))


async def test_only_visible_rows_are_rendered() -> None:
    app = MapApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(BlockMapView)
        cols = (view.scrollable_content_region.width - GUTTER) // CELL
        assert view.virtual_size.height == -(-100_000 // cols)
        assert len(view._cache) <= view.scrollable_content_region.height + 1
        view.scroll_to(y=2000, animate=False)
        await pilot.pause()
        # Each row starts with the index of its first block.
        strip = view.render_line(0)
        assert strip.text.split()[0] == str(2000 * cols)
        assert len(view._cache) <= 2 * (view.scrollable_content_region.height + 1)


async def test_cells_show_holders_cached_ranks_and_free() -> None:
    app = MapApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(BlockMapView)
        blocks = BIG.blocks
        assert blocks is not None
        cols = view.columns()
        text = view.render_line(0).text
        for i in range(cols):
            cell = text[GUTTER + CELL * i : GUTTER + CELL * (i + 1)]
            owner = blocks.owner(i)
            if owner is None:
                assert cell == "· "
            elif owner.kind == "hold":
                assert cell == "  "
            else:
                assert owner.rank is not None
                assert cell[0] == (
                    "0123456789abcdefghijklmnopqrstuvwxyz"[owner.rank] if owner.rank < 36 else "+"
                )


async def test_clicking_a_cell_names_its_block() -> None:
    app = MapApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(BlockMapView)
        cols = view.columns()
        await pilot.click(BlockMapView, offset=(GUTTER + CELL * 3, 2))
        assert app.clicked == [("kv", 2 * cols + 3)]
        await pilot.click(BlockMapView, offset=(1, 2))  # the gutter: no block
        assert len(app.clicked) == 1


class SmallMapApp(App[None]):
    CSS = "BlockMapView { height: 1fr; max-height: 100%; }"

    def __init__(self) -> None:
        super().__init__()
        self.clicked: list[int] = []

    def compose(self) -> ComposeResult:
        yield BlockMapView(synthetic_pool(32, holders=4))

    def on_block_map_view_block_clicked(self, message: BlockMapView.BlockClicked) -> None:
        self.clicked.append(message.block)


async def test_a_small_pool_takes_wide_tiles_that_fill_the_width() -> None:
    app = SmallMapApp()
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        view = app.query_one(BlockMapView)
        cell = view.cell_width()
        cols = view.columns()
        assert 4 <= cell <= 8
        assert cols * cell > (view.scrollable_content_region.width - GUTTER) - cell
        assert view.virtual_size.height == -(-32 // cols)
        text = view.render_line(0).text
        assert text[GUTTER + cell - 1] == " "  # a gap between two tiles
        await pilot.click(BlockMapView, offset=(GUTTER + cell * 2 + 1, 0))
        assert app.clicked == [2]
        await pilot.click(BlockMapView, offset=(GUTTER + cell - 1, 0))  # the gap
        assert app.clicked == [2]
