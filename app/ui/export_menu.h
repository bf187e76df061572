// The app's Export menu, opened from every plot (Export button or right-click): format, size, scale, light theme
// for print, transparent background, folder and file name (default ~/Pictures/transformer-studio, else the current
// folder), "export all heads of this layer" / "all layers × heads" (a folder of figures plus one grid image) and
// "save session". Failures (unwritable folder, full disk) become a message in the sidebar; nothing throws out.
#pragma once

#include "app/plot/figure.h"
#include "app/session/state.h"
#include "app/session/worker.h"

#include <string>

namespace ts::ui {

using namespace ts::studio;  // the session layer (app/session) below

struct ExportMenuContext {
    UiState* state = nullptr;
    const Snapshot* snap = nullptr;
    const LoadedModel* model = nullptr;
};
/// Call once per frame before the panels draw.
void set_export_menu_context(const ExportMenuContext& ctx);

/// Popup body for one figure (installed with gfx::set_export_menu).
void draw_export_menu(const plot::Figure& f);

/// The last export's result ("wrote ...", or the error), colored; nothing when there was none.
void draw_export_status();

/// ~/Pictures/transformer-studio when ~/Pictures exists, else the current folder.
[[nodiscard]] std::string default_export_dir();

/// A file-name stem from a title: letters, digits, '-' and '_' only ("Attention weights, layer 1" ->
/// "attention_weights_layer_1").
[[nodiscard]] std::string file_stem(const std::string& title);

}  // namespace ts::ui
