// Panels not written yet: each shows what it will contain.
#include "app/ui/panels/panels.h"

namespace ts::ui {
void draw_normalization_panel(PanelContext&) { empty_message("Normalization: coming next"); }
void draw_predictions_panel(PanelContext&) { empty_message("Predictions: coming next"); }
void draw_residual_panel(PanelContext&) { empty_message("Residual stream: coming next"); }
void draw_model_panel(PanelContext&) { empty_message("Model summary: coming next"); }
}  // namespace ts::ui
