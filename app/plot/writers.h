// Figure -> CSV (values behind a plot, for spreadsheets) and Figure -> SVG (a vector image of the same plot).
// GL-free; the on-screen painter and these writers share layout_figure() and the tick rules.
#pragma once

#include "app/plot/figure.h"

#include <string>

namespace ts::plot {

/// Heatmap: a header row "row\\col,<col labels...>" then one line per row "<row label>,v,v,..." (masked cells
/// written as -inf). Series: one block per series "series,<name>" / "x,y" / rows. Fields with commas or quotes are
/// quoted (RFC 4180).
[[nodiscard]] std::string figure_to_csv(const Figure& f);

/// A standalone SVG document of width×height pixels with title, axes, ticks, labels, series, heatmap cells,
/// colorbar and legend. The formula goes into <desc>.
[[nodiscard]] std::string figure_to_svg(const Figure& f, int width = 800, int height = 500);

}  // namespace ts::plot
