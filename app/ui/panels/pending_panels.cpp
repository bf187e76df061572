// Panels not written yet: each shows what it will contain.
#include "app/ui/panels/panels.h"

namespace ts::ui {
void draw_softmax_panel(PanelContext&) { empty_message("Softmax lab: coming next"); }
void draw_activations_panel(PanelContext&) { empty_message("Activations: coming next"); }
void draw_normalization_panel(PanelContext&) { empty_message("Normalization: coming next"); }
void draw_positions_panel(PanelContext&) { empty_message("Positions: coming next"); }
void draw_predictions_panel(PanelContext&) { empty_message("Predictions: coming next"); }
void draw_residual_panel(PanelContext&) { empty_message("Residual stream: coming next"); }
void draw_model_panel(PanelContext&) { empty_message("Model summary: coming next"); }
}  // namespace ts::ui
