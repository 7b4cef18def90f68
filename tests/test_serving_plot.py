"""The serving screen's charts: drawn by the helper process, or in this process when the helper
cannot be used; long histories thinned to the chart's width."""

from spark_tui.ui.widgets.serving_plot import _Helper, thin

REQUEST = {
    "series": {"decode": [1.0, 5.0, 3.0], "prefill": [2.0, 2.0, 9.0]},
    "width": 60,
    "height": 10,
    "ymax": None,
    "unit": "tok/s",
}


def test_helper_draws_and_a_broken_helper_falls_back():
    helper = _Helper()
    drawn = helper.draw(REQUEST)
    assert helper.proc is not None and helper.proc.poll() is None  # the helper process answered
    assert "decode" in drawn and "prefill" in drawn
    helper.proc.kill()
    helper.proc.wait()
    helper.broken = True
    assert helper.draw(REQUEST) == drawn  # same chart, drawn here


def test_thin_keeps_the_ends_and_the_width():
    values = [float(i) for i in range(1000)]
    out = thin(values, 100)
    assert len(out) == 100 and out[0] == 0.0 and out[-1] == 999.0
    assert thin(values[:10], 100) == values[:10]
