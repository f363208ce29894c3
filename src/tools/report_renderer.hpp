// Renders `kerntune report`'s JSON document (report_json.hpp) into one self-contained HTML page
// with `python3 -m kerntune.report` (python/kerntune/report.py: matplotlib's plots embedded as
// PNG). Finds a python3 that imports matplotlib and the kerntune package: installed beside the
// CLI (<prefix>/<libdir>/python), else in the source tree the CLI was built from.
#pragma once

#include <string>

namespace kt::cli {

// Writes the page of `json` to `out_path`, through a temporary file beside it that is renamed
// over it only when the renderer succeeded (a failure leaves `out_path` as it was). Throws
// kt::Error (kNotFound) naming what is missing: no python3 that imports matplotlib (each one
// tried, and the package to install), or no kerntune package (where it looked); (kInvalidArgument)
// when `out_path` cannot be written; (kInternal) when the renderer fails, its own message on
// stderr before.
void render_report(const std::string& json, const std::string& out_path);

}  // namespace kt::cli
