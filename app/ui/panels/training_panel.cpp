// Training panel: what training does that inference does not show, one topic at a time: the learning-rate warm-up
// of the original Transformer, inverted dropout on one of the model's own residual vectors, weight decay on one
// weight over many steps, and label smoothing's target and loss. Figures come from app/figures/training_figures.cpp
// (shared with `render`); each knob is a UiState train_* field, the topic is UiState::train_topic (a view name).
#include "app/figures/figures.h"
#include "app/gfx/painter.h"
#include "app/i18n/tr.h"
#include "app/session/neuron_index.h"
#include "app/ui/panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <functional>

namespace ts::ui {

namespace {

void draw_side_by_side(const std::vector<plot::Figure>& figs, const std::vector<float>& shares, const char* id) {
    const float avail_w = ImGui::GetContentRegionAvail().x;
    const float h = std::max(ImGui::GetTextLineHeight() * 12, ImGui::GetContentRegionAvail().y);
    for (size_t i = 0; i < figs.size(); ++i) {
        if (i) ImGui::SameLine();
        gfx::draw_figure(figs[i], ImVec2(avail_w * shares[i] - 6, h), {}, (std::string(id) + std::to_string(i)).c_str());
    }
}

// A combo over (value, label) pairs editing `value`; "" is the preset's own choice.
/// One knob of the settings rows, `w` wide, on the current row when it fits.
void row_slider(const char* label, float w, int* v, int lo, int hi) {
    same_line_if_fits(labeled_width(label, w));
    ImGui::SetNextItemWidth(w);
    ImGui::SliderInt(label, v, lo, hi);
}
void row_slider(const char* label, float w, float* v, float lo, float hi, const char* format) {
    same_line_if_fits(labeled_width(label, w));
    ImGui::SetNextItemWidth(w);
    ImGui::SliderFloat(label, v, lo, hi, format);
}

void choice_combo(const char* label, std::string& value, const std::vector<std::pair<const char*, const char*>>& items,
                  float width) {
    const char* shown = items.front().second;
    for (const auto& [v, l] : items)
        if (value == v) shown = l;
    ImGui::SetNextItemWidth(width);
    if (ImGui::BeginCombo(label, tr(shown))) {
        for (const auto& [v, l] : items)
            if (ImGui::Selectable(tr(l), value == v)) value = v;
        ImGui::EndCombo();
    }
}

/// The runs a student can show or compare: the recorded runs bundled for the lessons, then the lab folder's runs,
/// newest first (at most 30). Rescanned every 3 s, so new runs appear without a restart and no frame pays for a
/// directory scan.
struct LabRunList {
    std::vector<std::filesystem::path> runs;
    size_t n_bundled = 0;
    bool rescanned = false;  ///< this frame's call rescanned (logs may have grown)
};
const LabRunList& lab_run_list() {
    namespace fs = std::filesystem;
    static LabRunList list;
    static double listed_at = -1e9;
    list.rescanned = ImGui::GetTime() - listed_at > 3.0;
    if (!list.rescanned) return list;
    listed_at = ImGui::GetTime();
    list.runs = bundled_lab_runs();
    list.n_bundled = list.runs.size();
    std::vector<fs::path> mine;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(studio::user_data_dir() / "lab", ec))
        if (fs::is_regular_file(e.path() / "settings.json", ec)) mine.push_back(e.path());
    std::sort(mine.begin(), mine.end(), std::greater<>());  // newest first (timestamped names)
    if (mine.size() > 30) mine.resize(30);
    list.runs.insert(list.runs.end(), mine.begin(), mine.end());
    return list;
}
/// A combo over lab_run_list() editing `value` (a folder, or a bundled run's name); `none` is the "" entry's label.
void lab_run_combo(const char* label, std::string& value, const char* none, const std::string& exclude, float width) {
    const LabRunList& list = lab_run_list();
    const std::string shown = value.empty() ? std::string(none) : lab_run_name(value);
    ImGui::SetNextItemWidth(width);
    if (ImGui::BeginCombo(label, shown.c_str())) {
        if (ImGui::Selectable(none, value.empty())) value.clear();
        for (size_t i = 0; i < list.runs.size(); ++i) {
            const auto& r = list.runs[i];
            if (!exclude.empty() && resolve_lab_run(exclude) == r) continue;
            if (i == list.n_bundled && i > 0) ImGui::Separator();
            const std::string item =
                i < list.n_bundled ? trf("%s (recorded for the lessons)", lab_run_name(r).c_str()) : lab_run_name(r);
            // A bundled run is kept by name (a lesson's spelling, found wherever the app is installed).
            const std::string v = i < list.n_bundled ? lab_run_name(r) : r.string();
            if (ImGui::Selectable(item.c_str(), value == v)) value = v;
        }
        ImGui::EndCombo();
    }
}

/// A run folder's history, read again when its log grows (a run still going in another window).
struct LabFolderCache {
    std::string path, error;
    std::filesystem::file_time_type log_time;
    std::shared_ptr<const LabHistory> history;
    /// Reads `name_or_dir` when it changed, or when its log's time changed at a rescan. Returns true when it read.
    bool update(const std::string& name_or_dir, bool rescan) {
        namespace fs = std::filesystem;
        if (path == name_or_dir && !rescan) return false;  // no stat or asset scan on an ordinary frame
        const fs::path dir = resolve_lab_run(name_or_dir);
        std::error_code ec;
        const fs::file_time_type t = fs::last_write_time(dir / "lab_log.jsonl", ec);
        if (path == name_or_dir && t == log_time) return false;
        path = name_or_dir, log_time = t;
        error.clear();
        history.reset();
        try {
            history = std::make_shared<const LabHistory>(load_lab_history(dir));
        } catch (const std::exception& e) {
            error = e.what();
        }
        return true;
    }
};

/// Two runs side by side: the run shown (A: the live run or UiState::lab_run) against another run (B),
/// UiState::lab_compare; nothing when no B is chosen. Drawn above A's own curves, since choosing B asks for them.
void draw_lab_compare(PanelContext& ctx, const std::string& a_name, const std::shared_ptr<const LabHistory>& a,
                      int columns, float fig_w, float fig_h) {
    UiState& st = ctx.state;
    if (st.lab_compare.empty()) return;
    static LabFolderCache b;
    static struct {
        std::string a_name, language;
        std::shared_ptr<const LabHistory> a_seen, b_seen;
        std::vector<plot::Figure> figs;
    } cache;
    b.update(st.lab_compare, lab_run_list().rescanned);
    if (cache.b_seen != b.history || cache.a_seen != a || cache.a_name != a_name ||
        cache.language != i18n::language()) {
        cache.b_seen = b.history, cache.a_seen = a, cache.a_name = a_name;
        cache.language = i18n::language();
        cache.figs.clear();
        if (b.history) cache.figs = figures::lab_compare_figures(*a, *b.history, a_name, lab_run_name(st.lab_compare));
    }
    if (!b.error.empty()) {
        ImGui::TextWrapped("%s", b.error.c_str());
        return;
    }
    for (size_t i = 0; i < cache.figs.size(); ++i) {
        if (i % size_t(columns)) ImGui::SameLine();
        gfx::draw_figure(cache.figs[i], ImVec2(fig_w, fig_h), {}, ("lab_cmp" + std::to_string(i)).c_str());
    }
    // Both runs' snapshots: the sidebar's head on the probe in A and B at the timeline's step, and B − A.
    if (b.history && !a->snapshots.empty() && !b.history->snapshots.empty()) {
        static struct {
            std::shared_ptr<const LabHistory> a, b;
            int64_t step = -2;
            int layer = -1, head = -1;
            std::string language, error;
            std::vector<plot::Figure> figs;
        } att;
        if (att.a != a || att.b != b.history || att.step != st.lab_step || att.layer != st.layer ||
            att.head != st.head || att.language != i18n::language()) {
            att.a = a, att.b = b.history, att.step = st.lab_step, att.layer = st.layer, att.head = st.head;
            att.language = i18n::language();
            att.error.clear();
            att.figs.clear();
            try {
                const ProbePair p = probe_attention_pair(*a, *b.history, st.lab_step, st.layer, st.head);
                att.figs = figures::lab_compare_attention_figures(p.a, p.b, a_name, lab_run_name(st.lab_compare),
                                                                  p.layer, p.head);
            } catch (const std::exception& e) {
                att.error = e.what();
            }
        }
        if (!att.error.empty()) ImGui::TextWrapped("%s", att.error.c_str());
        // Three in a row, whatever the column count of the curves above.
        const float row_w = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
        const float side = std::min((row_w - 2 * ImGui::GetStyle().ItemSpacing.x) / 3, fig_h * 1.25f);
        for (size_t i = 0; i < att.figs.size(); ++i) {
            if (i) ImGui::SameLine();
            gfx::draw_figure(att.figs[i], ImVec2(side, side), {}, ("lab_att" + std::to_string(i)).c_str());
        }
    }
    ImGui::Separator();
    ImGui::TextDisabled("%s", trf("A: %s, its own curves", a_name.c_str()).c_str());
}

std::string lab_status_line(const TrainingLab& lab, const LabHistory* h) {
    const TrainingLab::Status status = lab.status();
    const int64_t step = h && !h->steps.empty() ? h->steps.back().step + 1 : 0;
    const int total = h ? h->total_steps : lab.settings().train.steps;
    const double rate = h && h->elapsed_s > 0 ? double(step) / h->elapsed_s : 0.0;
    switch (status) {
    case TrainingLab::Status::Idle: return tr("Choose a corpus and a model, then Start.");
    case TrainingLab::Status::Preparing: return tr("preparing the corpus and the model…");
    case TrainingLab::Status::Running:
        return trf("training: step %lld of %d, %.0f steps/s", (long long)step, total, rate);
    case TrainingLab::Status::Paused: return trf("paused at step %lld of %d", (long long)step, total);
    case TrainingLab::Status::Done:
        return trf("done: %lld steps in %.0f s; every snapshot opens in every panel", (long long)step,
                   h ? h->elapsed_s : 0.0);
    case TrainingLab::Status::Stopped: return trf("stopped at step %lld of %d", (long long)step, total);
    case TrainingLab::Status::Failed: return trf("the run failed: %s", lab.error().c_str());
    }
    return "";
}

// The live training lab: settings, controls, six live curves and the snapshot timeline.
void draw_lab(PanelContext& ctx) {
    TrainingLab* lab = ctx.lab;
    if (!lab) return empty_message(tr("the training lab is not available here"));
    const float line_h = ImGui::GetTextLineHeight();
    const float w = line_h * 8.5f;
    LabSettings& d = lab->draft();
    const bool active = lab->active();
    ImGui::BeginChild("lab_scroll", ImVec2(0, 0), false);

    // --- what to train (a header the teacher folds away to give the curves the room) ---
    ImGui::SetNextItemOpen(true, ImGuiCond_FirstUseEver);
    {  // a recorded run newly shown (a lesson's step): its settings fold away, giving its curves the room
        static std::string last_shown;
        if (ctx.state.lab_run != last_shown && !ctx.state.lab_run.empty()) ImGui::SetNextItemOpen(false);
        last_shown = ctx.state.lab_run;
    }
    const bool show_settings = ImGui::CollapsingHeader(tr("Model, corpus and training settings"));
    if (show_settings) {
        ImGui::BeginDisabled(active);
        std::string corpus = to_string(d.corpus);
        choice_combo(tr("corpus"), corpus,
                     {{"repeated-random", TS_N_("repeated random letters")},
                      {"english", TS_N_("English text (corpus/corpus.txt)")},
                      {"zh-en", TS_N_("English–Chinese pairs (corpus/zh-en/train.tsv)")},
                      {"file", TS_N_("a text file")}},
                     w * 1.6f);
        d.corpus = lab_corpus_from_string(corpus);
        if (d.corpus != LabCorpus::RepeatedRandom) {
            same_line_if_fits(line_h * 16);
            ImGui::SetNextItemWidth(line_h * 16);
            text_field("##lab_file",
                       d.corpus == LabCorpus::TextFile        ? tr("path of a UTF-8 text file")
                           : d.corpus == LabCorpus::ZhEnPairs ? tr("corpus/zh-en/train.tsv (empty: found on its own)")
                                                              : tr("corpus/corpus.txt (empty: found on its own)"),
                       d.corpus_file);
        }
        same_line_if_fits(labeled_width(tr("model"), w * 1.3f));
        {
            std::vector<std::pair<const char*, const char*>> presets;
            for (const auto& p : lab_presets()) presets.emplace_back(p.name, p.name);
            choice_combo(tr("model"), d.preset, presets, w * 1.3f);
            if (ImGui::IsItemHovered())
                for (const auto& p : lab_presets())
                    if (d.preset == p.name) ImGui::SetTooltip("%s", tr(p.description));
        }
        same_line_if_fits(labeled_width(tr("norm placement"), w));
        choice_combo(tr("norm placement"), d.norm_placement,
                     {{"", TS_N_("preset's")}, {"pre", "pre-norm"}, {"post", "post-norm"}}, w);
        same_line_if_fits(labeled_width(tr("norm"), w));
        choice_combo(tr("norm"), d.norm, {{"", TS_N_("preset's")}, {"layernorm", "LayerNorm"}, {"rmsnorm", "RMSNorm"}},
                     w);
        same_line_if_fits(labeled_width(tr("heads"), w));
        choice_combo(tr("heads"), d.attention,
                     {{"", TS_N_("preset's")}, {"mha", "MHA"}, {"gqa", "GQA"}, {"mqa", "MQA"}}, w);
        same_line_if_fits(labeled_width(tr("positions"), w));
        choice_combo(tr("positions"), d.position,
                     {{"", TS_N_("preset's")},
                      {"learned", TS_N_("learned")},
                      {"sinusoidal", TS_N_("sinusoidal")},
                      {"rope", "RoPE"},
                      {"none", TS_N_("none")}},
                     w);
        same_line_if_fits(labeled_width("QK-norm", 0));
        ImGui::Checkbox("QK-norm", &d.qk_norm);

        // --- how to train ---
        train::TrainOptions& o = d.train;
        ImGui::SetNextItemWidth(w);
        ImGui::SliderInt(tr("steps"), &o.steps, 100, 20000, "%d", ImGuiSliderFlags_Logarithmic);
        same_line_if_fits(labeled_width(tr("learning rate"), w));
        ImGui::SetNextItemWidth(w);
        if (slider_log(tr("learning rate"), &o.lr, 1e-4f, 3e-2f, "%.2g")) o.min_lr = o.lr / 10;
        row_slider(tr("warm-up steps"), w, &o.warmup, 0, 2000);
        row_slider(tr("batch"), w, &o.batch, 1, 64);
        row_slider(tr("sequence length"), w, &o.seq_len, 8, 256);
        row_slider(tr("dropout"), w, &o.dropout, 0.0f, 0.5f, "%.2f");
        row_slider(tr("weight decay"), w, &o.weight_decay, 0.0f, 0.5f, "%.2f");
        row_slider(tr("z-loss"), w, &o.z_loss, 0.0f, 0.01f, "%.4f");
        row_slider(tr("label smoothing"), w, &o.label_smoothing, 0.0f, 0.3f, "%.2f");
        same_line_if_fits(labeled_width(tr("seed"), w));
        ImGui::SetNextItemWidth(w);
        int seed = int(o.seed);
        if (ImGui::SliderInt(tr("seed"), &seed, 1, 100)) o.seed = uint64_t(seed);
        ImGui::EndDisabled();
    }
    d.train.warmup = std::clamp(d.train.warmup, 0, d.train.steps);
    d.train.snapshot_every = std::max(10, d.train.steps / 30);  // about 30 snapshots on the timeline
    d.train.eval_every = std::max(10, d.train.steps / 60);

    // --- controls ---
    const auto h = lab->history();
    if (!active) {
        if (ImGui::Button(tr("Start"))) {
            LabSettings s = d;
            ctx.state.lab_step = -1;
            ctx.state.lab_run.clear();  // show the new run
            lab->start(s, default_lab_dir(s));
        }
    } else {
        if (lab->status() == TrainingLab::Status::Paused) {
            if (ImGui::Button(tr("Resume"))) lab->resume();
        } else if (ImGui::Button(tr("Pause"))) {
            lab->pause();
        }
        ImGui::SameLine();
        if (ImGui::Button(tr("Stop"))) lab->stop();
    }
    ImGui::SameLine();
    const std::string status = lab_status_line(*lab, h.get());
    if (lab->status() == TrainingLab::Status::Failed) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.45f, 0.3f, 1.0f));
        text_wrapped(status);
        ImGui::PopStyleColor();
    } else {
        text_wrapped(status);
    }
    if (lab->status() != TrainingLab::Status::Idle) {
        ImGui::TextDisabled("%s", trf("run folder: %s", lab->dir().string().c_str()).c_str());
    }

    // --- the run shown: the live one, or a recorded one (a lesson's, or an earlier run of the lab) ---
    UiState& st = ctx.state;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("Run shown:"));
    ImGui::SameLine();
    lab_run_combo("##lab_shown", st.lab_run, tr("the live run"), "", ImGui::GetFontSize() * 22);
    std::shared_ptr<const LabHistory> shown = h;
    std::string shown_name = lab->status() == TrainingLab::Status::Idle ? "" : lab_run_name(lab->dir());
    if (!st.lab_run.empty()) {
        static LabFolderCache recorded;
        // A newly shown run's settings become the draft (when no run is going), so the settings rows say how it
        // was trained and Start trains it again.
        if (recorded.update(st.lab_run, lab_run_list().rescanned) && recorded.history && !active) {
            try {
                d = load_lab_settings(resolve_lab_run(st.lab_run) / "settings.json");
            } catch (const std::exception&) {  // the history read it: cannot fail now but for a race; keep the draft
            }
        }
        shown = recorded.history;
        shown_name = lab_run_name(st.lab_run);
        same_line_if_fits(ImGui::CalcTextSize(tr("Train it again")).x + line_h);
        ImGui::BeginDisabled(active || !shown);
        if (ImGui::Button(tr("Train it again"))) {
            try {
                d = load_lab_settings(resolve_lab_run(st.lab_run) / "settings.json");
                st.lab_run.clear();
                st.lab_step = -1;
                lab->start(d, default_lab_dir(d));
            } catch (const std::exception& e) {
                recorded.error = e.what();
            }
        }
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
            ImGui::SetTooltip("%s",
                              tr("the same settings and seed, trained here: its curves follow the recorded ones"));
        if (!recorded.error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.95f, 0.45f, 0.3f, 1.0f));
            text_wrapped(recorded.error);
            ImGui::PopStyleColor();
        }
    }

    same_line_if_fits(labeled_width(tr("compare with"), ImGui::GetFontSize() * 16));
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("compare with"));
    ImGui::SameLine();
    lab_run_combo("##lab_compare", st.lab_compare, tr("none"), st.lab_run, ImGui::GetFontSize() * 16);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s %s", tr("compare the run shown (A) with another run (B)"),
                          tr("runs of the lab are kept in its folder; change one setting, Start again, and "
                             "compare the two"));

    // --- the timeline ---
    if (shown && !shown->snapshots.empty()) {
        const auto& snaps = shown->snapshots;
        int index = int(snaps.size()) - 1;
        for (size_t i = 0; i < snaps.size(); ++i)
            if (snaps[i].first == ctx.state.lab_step) index = int(i);
        ImGui::SetNextItemWidth(std::max(line_h * 12, ImGui::GetContentRegionAvail().x * 0.3f));
        char fmt[64];
        std::snprintf(fmt, sizeof fmt, "%s", trf("step %lld", (long long)snaps[size_t(index)].first).c_str());
        const bool moved =
            ImGui::SliderInt(tr("timeline: the model at a snapshot"), &index, 0, int(snaps.size()) - 1, fmt);
        same_line_if_fits(ImGui::CalcTextSize(tr("Open in every panel")).x + line_h);
        const bool open = ImGui::Button(tr("Open in every panel"));
        same_line_if_fits(ImGui::CalcTextSize(tr("Use the probe as the text")).x + line_h);
        if (ImGui::Button(tr("Use the probe as the text"))) {
            const auto& ids = lab_probe_ids();
            ctx.state.text.assign(ids.begin(), ids.end());
        }
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", tr("24 random letters written twice: the text the lab scores heads on"));
        if (moved || open) {
            ctx.state.lab_step = int(snaps[size_t(index)].first);
            if (ctx.load_model) ctx.load_model(snaps[size_t(index)].second);
        }
    }

    // --- the curves ---
    // Rebuilt only when the run publishes or the timeline moves, not every frame.
    static const LabHistory empty;
    static struct {
        std::shared_ptr<const LabHistory> history;
        int64_t marker = -2;
        std::string language;
        std::vector<plot::Figure> figs;
    } cache;
    if (cache.figs.empty() || cache.history != shown || cache.marker != ctx.state.lab_step ||
        cache.language != i18n::language()) {
        cache.figs = lab_figures(shown ? *shown : empty, ctx.state.lab_step);
        cache.history = shown;
        cache.marker = ctx.state.lab_step;
        cache.language = i18n::language();
    }
    const float avail_w = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
    const float fig_h =
        std::max(line_h * 13, (ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y * 2) * 0.5f);
    // Three columns where each figure gets ~400 px, else two (a 1280-pixel window).
    const int columns = avail_w >= line_h * 3 * 26 ? 3 : 2;
    const float fig_w = avail_w / float(columns) - ImGui::GetStyle().ItemSpacing.x;
    if (shown) draw_lab_compare(ctx, shown_name, shown, columns, fig_w, fig_h);
    const std::vector<plot::Figure>& figs = cache.figs;
    for (size_t i = 0; i < figs.size(); ++i) {
        if (i % size_t(columns)) ImGui::SameLine();
        gfx::draw_figure(figs[i], ImVec2(fig_w, fig_h), {}, ("lab_fig" + std::to_string(i)).c_str());
    }
    ImGui::EndChild();
}

}  // namespace

void draw_training_panel(PanelContext& ctx) {
    UiState& st = ctx.state;
    const float line_h = ImGui::GetTextLineHeight();
    const float knob_w = line_h * 7;
    static const std::pair<const char*, const char*> topics[] = {{"lab", TS_N_("live training lab")},
                                                                 {"lr-schedule", TS_N_("learning-rate warm-up")},
                                                                 {"dropout", TS_N_("dropout")},
                                                                 {"weight-decay", TS_N_("weight decay")},
                                                                 {"label-smoothing", TS_N_("label smoothing")}};
    for (size_t i = 0; i < std::size(topics); ++i) {
        if (i) ImGui::SameLine();
        if (ImGui::RadioButton(tr(topics[i].second), st.train_topic == topics[i].first)) st.train_topic = topics[i].first;
    }
    if (st.train_topic == "lab") return draw_lab(ctx);
    if (st.train_topic == "dropout") {
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("dropout p"), &st.train_dropout, 0.0f, 0.9f, "%.2f");
        same_line_if_fits(labeled_width(tr("mask seed"), knob_w));
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderInt(tr("mask seed"), &st.train_seed, 1, 100);
        same_line_if_fits(ImGui::CalcTextSize(tr("(token and layer: the query and layer knobs on the left)")).x);
        ImGui::TextDisabled("%s", tr("(token and layer: the query and layer knobs on the left)"));
        st.clamp();
        const Snapshot* s = ctx.snap;
        if (!(s && s->trace && s->tokens && !s->tokens->ids.empty()))
            return empty_message(no_forward_message(ctx, tr("dropout on your text's activations appears after the first forward pass")));
        try {
            draw_side_by_side(dropout_figures(st, *s), {0.56f, 0.44f}, "dropout");
        } catch (const std::exception& e) {
            empty_message(e.what());
        }
    } else if (st.train_topic == "weight-decay") {
        ImGui::SetNextItemWidth(knob_w);
        slider_log(tr("learning rate η"), &st.train_lr, 1e-4f, 0.1f, "%.4g");
        same_line_if_fits(labeled_width(tr("weight decay λ"), knob_w));
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("weight decay λ"), &st.train_weight_decay, 0.0f, 1.0f, "%.3f");
        same_line_if_fits(labeled_width(tr("gradient g"), knob_w));
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("gradient g"), &st.train_grad, -1.0f, 1.0f, "%.2f");
        st.clamp();
        draw_side_by_side({weight_decay_figure(st)}, {1.0f}, "weight_decay");
    } else if (st.train_topic == "label-smoothing") {
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderFloat(tr("label smoothing ε"), &st.train_label_smoothing, 0.0f, 0.5f, "%.2f");
        st.clamp();
        const std::vector<plot::Figure> ls = label_smoothing_figures(st);
        draw_side_by_side({ls[0], ls[1]}, {0.42f, 0.58f}, "label");
    } else {
        st.train_topic = "lr-schedule";
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderInt(tr("warm-up steps"), &st.train_warmup, 0, 20000);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(knob_w);
        ImGui::SliderInt("d_model", &st.train_d_model, 64, 4096, "%d", ImGuiSliderFlags_Logarithmic);
        st.clamp();
        draw_side_by_side({lr_schedule_figure(st)}, {1.0f}, "lr_schedule");
    }
}

}  // namespace ts::ui
