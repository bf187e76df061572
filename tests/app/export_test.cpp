// Export without GL: golden SVGs of deterministic figures (regenerate with TS_UPDATE_GOLDEN=1), SVG well-formedness,
// CSV numbers equal to what the core computes, every named view builds, option errors, atomic writes, sessions.
#include "app/plot/writers.h"
#include "app/figures/figures.h"
#include "app/figures/views.h"
#include "app/session/worker.h"
#include "core/kernels/ops.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace ts;
using namespace ts::figures;
using namespace ts::studio;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Minimal XML well-formedness: every tag closes in order, attributes are quoted, entities are known, no raw '<'
/// or '&' in text. Returns "" when well formed, else what is wrong and where.
std::string xml_problem(const std::string& s) {
    std::vector<std::string> stack;
    size_t i = 0;
    auto at = [&](size_t k) { return " at byte " + std::to_string(k); };
    while (i < s.size()) {
        if (s[i] == '&') {
            const size_t e = s.find(';', i);
            if (e == std::string::npos) return "unterminated entity" + at(i);
            const std::string ent = s.substr(i, e - i + 1);
            if (ent != "&lt;" && ent != "&gt;" && ent != "&amp;" && ent != "&quot;" && ent != "&apos;") return "unknown entity " + ent + at(i);
            i = e + 1;
            continue;
        }
        if (s[i] != '<') { ++i; continue; }
        if (s.compare(i, 2, "<?") == 0) {
            const size_t e = s.find("?>", i);
            if (e == std::string::npos) return "unterminated <?" + at(i);
            i = e + 2;
            continue;
        }
        const bool closing = i + 1 < s.size() && s[i + 1] == '/';
        size_t j = i + (closing ? 2 : 1);
        const size_t name_start = j;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':' || s[j] == '_')) ++j;
        const std::string name = s.substr(name_start, j - name_start);
        if (name.empty()) return "tag without a name" + at(i);
        // Attributes.
        bool self_close = false;
        while (j < s.size() && s[j] != '>') {
            if (s[j] == '/' && j + 1 < s.size() && s[j + 1] == '>') { self_close = true; ++j; break; }
            if (s[j] == '"') {
                const size_t e = s.find('"', j + 1);
                if (e == std::string::npos) return "unterminated attribute" + at(j);
                if (s.substr(j + 1, e - j - 1).find('<') != std::string::npos) return "'<' inside an attribute" + at(j);
                j = e + 1;
                continue;
            }
            if (s[j] == '=' && (j + 1 >= s.size() || s[j + 1] != '"')) return "unquoted attribute" + at(j);
            ++j;
        }
        if (j >= s.size()) return "unterminated tag <" + name + at(i);
        if (closing) {
            if (stack.empty() || stack.back() != name) return "</" + name + "> does not close <" + (stack.empty() ? "" : stack.back()) + ">" + at(i);
            stack.pop_back();
        } else if (!self_close) {
            stack.push_back(name);
        }
        i = j + 1;
    }
    if (!stack.empty()) return "<" + stack.back() + "> never closed";
    return "";
}

/// True when a and b differ only in numbers, each by at most 0.011: the SVG writer prints coordinates with two
/// decimals, and another optimisation level (the asan preset's -O1, FMA contraction) may round the last one the
/// other way. Text, element order and every other character must match exactly.
bool same_up_to_last_digit(const std::string& a, const std::string& b) {
    auto is_num = [](char c) { return (c >= '0' && c <= '9') || c == '.' || c == '-'; };
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (is_num(a[i]) && is_num(b[j]) && (std::isdigit(static_cast<unsigned char>(a[i])) || std::isdigit(static_cast<unsigned char>(b[j])) ||
                                             (i + 1 < a.size() && std::isdigit(static_cast<unsigned char>(a[i + 1]))))) {
            size_t ie = i, je = j;
            while (ie < a.size() && is_num(a[ie])) ++ie;
            while (je < b.size() && is_num(b[je])) ++je;
            char* end = nullptr;
            const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            const double x = std::strtod(na.c_str(), &end);
            if (end != na.c_str() + na.size()) { if (na != nb) return false; }
            else {
                const double y = std::strtod(nb.c_str(), &end);
                if (end != nb.c_str() + nb.size() || std::abs(x - y) > 0.011) return false;
            }
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return false;
            ++i;
            ++j;
        }
    }
    return i == a.size() && j == b.size();
}

void expect_golden(const std::string& name, const std::string& actual) {
    const fs::path golden = fs::path(TS_GOLDEN_DIR) / "svg" / name;
    if (const char* u = std::getenv("TS_UPDATE_GOLDEN"); u && std::string(u) == "1") {
        fs::create_directories(golden.parent_path());
        std::ofstream(golden, std::ios::binary) << actual;
        GTEST_SKIP() << "updated " << golden;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: regenerate with TS_UPDATE_GOLDEN=1 ts_app_tests --gtest_filter='ExportGolden.*'";
    const std::string expected = read_file(golden);
    if (expected != actual && !same_up_to_last_digit(expected, actual)) {
        size_t k = 0;
        while (k < expected.size() && k < actual.size() && expected[k] == actual[k]) ++k;
        FAIL() << name << " differs from the golden at byte " << k << ":\n  golden: "
               << expected.substr(k > 60 ? k - 60 : 0, 160) << "\n  actual: " << actual.substr(k > 60 ? k - 60 : 0, 160)
               << "\nIf the change is intended: TS_UPDATE_GOLDEN=1 ts_app_tests --gtest_filter='ExportGolden.*'";
    }
}

std::vector<std::vector<std::string>> parse_csv(const std::string& csv) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < csv.size(); ++i) {
        const char c = csv[i];
        if (quoted) {
            if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') { field += '"'; ++i; }
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') quoted = true;
        else if (c == ',') { row.push_back(field); field.clear(); }
        else if (c == '\n') { row.push_back(field); field.clear(); rows.push_back(row); row.clear(); }
        else field += c;
    }
    return rows;
}

UiState softmax_state() {
    UiState st;
    st.sm_use_typed = true;
    st.sm_typed_logits = "2.0, 1.0, 0.1, -1.0";
    st.sm_temperature = 0.5f;
    st.sm_mask = MaskChoice::None;
    return st;
}

plot::ExportOptions svg_options() {
    plot::ExportOptions o;
    o.width = 800;
    o.height = 500;
    return o;
}

}  // namespace

// --- golden SVGs ------------------------------------------------------------------------------------------------------

TEST(ExportGolden, ActivationCurves) {
    const std::string svg = plot::figures_to_svg(build_view("activations", UiState{}, nullptr, nullptr).figures, svg_options());
    EXPECT_EQ(xml_problem(svg), "");
    expect_golden("activations.svg", svg);
}

TEST(ExportGolden, SinusoidalTable) {
    UiState st;
    st.pe_positions = 32;
    st.pe_d_model = 32;
    const std::string svg = plot::figures_to_svg(build_view("positions-table", st, nullptr, nullptr).figures, svg_options());
    EXPECT_EQ(xml_problem(svg), "");
    expect_golden("positions_table.svg", svg);
}

TEST(ExportGolden, SoftmaxAtHalfTemperature) {
    const std::string svg = plot::figures_to_svg(build_view("softmax", softmax_state(), nullptr, nullptr).figures, svg_options());
    EXPECT_EQ(xml_problem(svg), "");
    expect_golden("softmax_t0.5.svg", svg);
}

// --- SVG structure ----------------------------------------------------------------------------------------------------

TEST(ExportSvg, TextIsTextLinesArePathsAndBigHeatmapsAreOneImage) {
    UiState st;
    st.pe_positions = 128;
    st.pe_d_model = 64;  // 8192 cells > 64×64: one embedded PNG
    const auto vf = build_view("positions-table", st, nullptr, nullptr);
    const std::string big = plot::figures_to_svg(vf.figures, svg_options());
    EXPECT_EQ(xml_problem(big), "");
    EXPECT_NE(big.find("<image "), std::string::npos);
    EXPECT_NE(big.find("data:image/png;base64,iVBORw0KGgo"), std::string::npos);  // PNG signature in base64
    EXPECT_NE(big.find(">Sinusoidal table PE (position × dimension)</text>"), std::string::npos);
    const std::string curves = plot::figures_to_svg(build_view("activations", UiState{}, nullptr, nullptr).figures, svg_options());
    EXPECT_NE(curves.find("<path fill=\"none\""), std::string::npos);
    EXPECT_EQ(curves.find("<image"), std::string::npos);
    EXPECT_NE(curves.find(">GELU (erf)</text>"), std::string::npos);  // legend entry as text
}

TEST(ExportSvg, ThemesScaleAndTransparency) {
    const auto figs = build_view("softmax", softmax_state(), nullptr, nullptr).figures;
    plot::ExportOptions o = svg_options();
    const std::string light = plot::figures_to_svg(figs, o);
    EXPECT_NE(light.find("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"), std::string::npos);
    o.dark = true;
    EXPECT_NE(plot::figures_to_svg(figs, o).find("fill=\"#1a1c21\""), std::string::npos);
    o.transparent = true;
    EXPECT_EQ(plot::figures_to_svg(figs, o).find("height=\"100%\" fill="), std::string::npos);
    o.scale = 2;
    EXPECT_NE(plot::figures_to_svg(figs, o).find("font-size=\"26\""), std::string::npos);
    o.scale = 100;
    EXPECT_THROW((void)plot::figures_to_svg(figs, o), std::invalid_argument);
}

TEST(ExportSvg, WellFormedWithHostileLabels) {
    plot::Figure f;
    f.title = "a < b & c > \"d\" \x01";
    f.x.categories = {"<tag>", "&amp;", "中文"};
    plot::Series s;
    s.kind = plot::SeriesKind::Bars;
    s.name = "x&y";
    s.x = {0, 1, 2};
    s.y = {1, NAN, 3};
    f.series.push_back(s);
    f.note = "line 1\nline <2>";
    EXPECT_EQ(xml_problem(plot::figure_to_svg(f)), "");
    EXPECT_NE(xml_problem("<svg><g></svg>"), "");  // the checker itself can fail
}

// --- CSV equals the core --------------------------------------------------------------------------------------------

TEST(ExportCsv, SoftmaxProbabilitiesEqualCore) {
    const UiState st = softmax_state();
    const auto rows = parse_csv(plot::figures_to_csv(build_view("softmax", st, nullptr, nullptr).figures));
    ASSERT_GE(rows.size(), 2u);
    EXPECT_EQ(rows[0][0], "series");
    MatrixRM z(1, 4);
    z << 2.0f, 1.0f, 0.1f, -1.0f;
    const MatrixRM p = softmax_rows(z, 0.5f), p1 = softmax_rows(z, 1.0f);
    int checked = 0;
    for (size_t r = 1; r < rows.size(); ++r) {
        const int k = std::stoi(rows[r][1]);
        const float v = std::stof(rows[r][3]);
        const float want = rows[r][0] == "T = 1 (reference)" ? p1(0, k) : p(0, k);
        EXPECT_EQ(v, want) << "row " << r;  // 9 significant digits: float exact
        ++checked;
    }
    EXPECT_EQ(checked, 8);
}

TEST(ExportCsv, SinusoidalTableEqualsCore) {
    UiState st;
    st.pe_positions = 16;
    st.pe_d_model = 8;
    const auto rows = parse_csv(plot::figures_to_csv(build_view("positions-table", st, nullptr, nullptr).figures));
    ASSERT_EQ(rows.size(), 17u);
    EXPECT_EQ(rows[0][0], "position\\dimension");
    const MatrixRM pe = sinusoidal_table(16, 8, st.pe_base);
    for (int p = 0; p < 16; ++p)
        for (int d = 0; d < 8; ++d) EXPECT_EQ(std::stof(rows[size_t(p + 1)][size_t(d + 1)]), pe(p, d)) << p << "," << d;
}

TEST(ExportCsv, ActivationExamplePointsEqualCore) {
    UiState st;
    st.act_shown.fill(false);
    st.act_shown[4] = true;  // GELU (erf)
    const auto rows = parse_csv(plot::figures_to_csv(build_view("activations", st, nullptr, nullptr).figures));
    int examples = 0;
    for (size_t r = 1; r < rows.size(); ++r) {
        const float x = std::stof(rows[r][1]), y = std::stof(rows[r][2]);
        EXPECT_FLOAT_EQ(y, gelu(x)) << "x = " << x;
        if (rows[r][0] == "series 1") ++examples;
    }
    EXPECT_EQ(examples, 5);
}

TEST(ExportGolden, NumbersMayDifferInTheirLastPrintedDigitOnly) {
    EXPECT_TRUE(same_up_to_last_digit("<rect x=\"65.33\" y=\"-1.5\"/>", "<rect x=\"65.32\" y=\"-1.5\"/>"));
    EXPECT_FALSE(same_up_to_last_digit("<rect x=\"65.33\"/>", "<rect x=\"65.40\"/>"));
    EXPECT_FALSE(same_up_to_last_digit("<text>T = 0.5</text>", "<text>T = 0.5 </text>"));
    EXPECT_FALSE(same_up_to_last_digit("<text>abc</text>", "<text>abd</text>"));
}

// --- every view ---------------------------------------------------------------------------------------------------

TEST(ExportViews, EveryViewBuildsFromTheDemoModel) {
    const LoadedModel m = make_demo_model();
    UiState st;
    st.text = "The cat sat. 注意";
    st.interp_corrupt = "The dog sat. 注意";  // same bytes (the demo model's tokens) for the patching views
    st.interp_answer = "a";
    st.interp_wrong = "e";
    st.layer = 1;
    st.head = 3;
    const auto snap = run_forward_now(st, m);
    ASSERT_TRUE(snap->error.empty()) << snap->error;
    for (const auto& v : all_views()) {
        SCOPED_TRACE(v.name);
        if (v.name == "fill-mask") continue;  // needs a masked-LM model (BERT): tests/app/fill_mask_test.cpp
        ViewFigures vf;
        if (v.name == "neuron-examples") {  // reads a corpus with a tokenizer, which the demo model lacks
            try {
                (void)build_view(v.name, st, snap.get(), &m);
                ADD_FAILURE() << "neuron-examples built without a tokenizer";
            } catch (const std::runtime_error& e) {
                EXPECT_NE(std::string(e.what()).find("tokenizer"), std::string::npos) << e.what();
            }
            continue;
        }
        if (v.name.rfind("lab-", 0) == 0) {  // run folders: without them, the one-line error
            try {
                (void)build_view(v.name, st, snap.get(), &m);
                ADD_FAILURE() << v.name << " built without --lab-run";
            } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("--lab-run"), std::string::npos) << e.what();
            }
            continue;  // with a run: TrainingLab.HistoryRecordsStepsEvaluationsProbesAndSnapshots, cli_render_lab_curves
        }
        if (v.name == "quant-lens") {  // a quantized GGUF file only (QuantizationLens.*, cli_render_quant_lens_*)
            try {
                (void)build_view(v.name, st, snap.get(), &m);
                ADD_FAILURE() << "quant-lens built from a model with nothing quantized";
            } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("no quantized matrices"), std::string::npos) << e.what();
            }
            continue;
        }
        if (v.name.rfind("relative-bias", 0) == 0) {  // T5 only (ExportViews.RelativeBiasViewsOfAT5Folder)
            EXPECT_THROW((void)build_view(v.name, st, snap.get(), &m), std::runtime_error);
            continue;
        }
        ASSERT_NO_THROW(vf = build_view(v.name, st, snap.get(), &m));
        ASSERT_FALSE(vf.figures.empty());
        EXPECT_EQ(vf.names.size(), vf.figures.size());
        for (const auto& f : vf.figures) {
            EXPECT_FALSE(f.title.empty());
            EXPECT_FALSE(f.view.empty());
            if (vf.figures.size() == 1) EXPECT_EQ(f.view, v.name);  // each view's builder picks its own figure
            EXPECT_TRUE(f.heatmap || !f.series.empty());
        }
        EXPECT_EQ(xml_problem(plot::figures_to_svg(vf.figures, svg_options())), "");
    }
    EXPECT_EQ(build_view("attention-grid", st, snap.get(), &m).figures.size(), 16u);  // 4 layers × 4 heads
    EXPECT_EQ(build_view("attention-layer", st, snap.get(), &m).names[3], "layer1_head3");
}

TEST(ExportViews, RelativeBiasViewsOfAT5Folder) {
    const LoadedModel m = load_model_folder(test::golden_path("hf_t5"), {});
    UiState st;
    st.head = 2;
    st.pe_positions = 10;
    st.attn_source = AttnSource::Encoder;
    const ViewFigures vf = build_view("relative-bias", st, nullptr, &m);
    ASSERT_EQ(vf.figures.size(), 1u);
    ASSERT_TRUE(vf.figures[0].heatmap);
    EXPECT_EQ(vf.figures[0].heatmap->rows, 10);
    EXPECT_EQ(vf.names[0], "relative_bias_enc_head2");
    // bias[i][j] is the table entry of bucket(j − i) for head 2: constant along diagonals.
    const Tensor& table = m.model->weight("enc.relative_attention_bias");
    const int H = m.model->config().n_heads;
    for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 10; ++j)
            EXPECT_EQ(vf.figures[0].heatmap->at(i, j), table.data[size_t(relative_position_bucket(j - i, true, 8, 12)) * H + 2]);
    st.attn_source = AttnSource::Decoder;
    const ViewFigures heads = build_view("relative-bias-heads", st, nullptr, &m);
    EXPECT_EQ(int(heads.figures[0].series.size()), H);
    EXPECT_TRUE(std::isinf(build_view("relative-bias", st, nullptr, &m).figures[0].heatmap->at(0, 1)));  // future key
    EXPECT_EQ(build_view("relative-buckets", st, nullptr, &m).figures[0].series.size(), 2u);
}

TEST(ExportViews, AttentionCsvEqualsTrace) {
    const LoadedModel m = make_demo_model();
    UiState st;
    st.text = "abcd";
    st.layer = 2;
    st.head = 1;
    const auto snap = run_forward_now(st, m);
    const auto rows = parse_csv(plot::figures_to_csv(build_view("attention", st, snap.get(), &m).figures));
    const Tensor* probs = snap->find("dec.2.attn.probs");
    ASSERT_NE(probs, nullptr);
    ASSERT_EQ(rows.size(), 5u);
    for (int q = 0; q < 4; ++q)
        for (int k = 0; k < 4; ++k)
            EXPECT_EQ(std::stof(rows[size_t(q + 1)][size_t(k + 1)]), probs->data[size_t((1 * 4 + q) * 4 + k)]);
}

TEST(ExportViews, UnknownViewsAndOptionsAreClearErrors) {
    UiState st;
    EXPECT_THROW((void)build_view("atention", st, nullptr, nullptr), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "activations", "head", "2"), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "softmax", "temperature", "hot"), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "softmax", "temperature", "0"), std::invalid_argument);
    EXPECT_THROW(apply_view_option(st, "activations", "curves", "relu,sinh"), std::invalid_argument);
    EXPECT_THROW((void)build_view("attention", st, nullptr, nullptr), std::runtime_error);  // needs a forward pass
    apply_view_option(st, "softmax", "temperature", "0.5");
    EXPECT_FLOAT_EQ(st.sm_temperature, 0.5f);
    apply_view_option(st, "predictions", "temperature", "2");
    EXPECT_FLOAT_EQ(st.sample_temperature, 2.0f);
    set_state_field(st, "rope_theta=500000");
    EXPECT_FLOAT_EQ(st.rope_theta, 500000.0f);
    EXPECT_THROW(set_state_field(st, "no_such_key=1"), std::invalid_argument);
    EXPECT_THROW(set_state_field(st, "layer=\"two\""), std::invalid_argument);
    EXPECT_NE(describe_views().find("attention-grid"), std::string::npos);
}

// --- files and sessions -------------------------------------------------------------------------------------------------

TEST(ExportFiles, AtomicWriteAndErrorsNameThePath) {
    const fs::path dir = fs::temp_directory_path() / ("ts_export_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    plot::write_file_atomic(dir / "sub" / "a.csv", "x,y\n1,2\n");
    EXPECT_EQ(read_file(dir / "sub" / "a.csv"), "x,y\n1,2\n");
    plot::write_file_atomic(dir / "sub" / "a.csv", "x\n");  // replaces
    EXPECT_EQ(read_file(dir / "sub" / "a.csv"), "x\n");
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir / "sub")) files += e.is_regular_file() ? 1 : 0;
    EXPECT_EQ(files, 1u);  // no temp file left behind
    try {
        plot::write_file_atomic("/proc/ts_no_such_dir/fig.svg", "x");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/proc/ts_no_such_dir/fig.svg"), std::string::npos) << e.what();
    }
    EXPECT_THROW(plot::write_file_atomic(dir / "sub", "x"), std::runtime_error);  // a folder
    EXPECT_THROW((void)plot::export_format_from_path("fig.jpg"), std::invalid_argument);
    EXPECT_EQ(plot::export_format_from_path("FIG.PNG"), plot::ExportFormat::Png);
    fs::remove_all(dir);
}

TEST(ExportFiles, SessionRoundTripReproducesTheFigure) {
    const fs::path file = fs::temp_directory_path() / ("ts_session_" + std::to_string(::getpid()) + ".json");
    UiState st = softmax_state();
    st.view = "softmax";
    st.sm_mask = MaskChoice::Causal;
    save_session(file, st);
    const UiState back = load_session(file);
    EXPECT_EQ(back.view, "softmax");
    EXPECT_EQ(plot::figures_to_svg(build_view(back.view, back, nullptr, nullptr).figures, svg_options()),
              plot::figures_to_svg(build_view(st.view, st, nullptr, nullptr).figures, svg_options()));
    std::ofstream(file) << "[1, 2]";
    EXPECT_THROW((void)load_session(file), std::runtime_error);
    std::ofstream(file) << "{ broken";
    EXPECT_THROW((void)load_session(file), std::runtime_error);
    fs::remove(file);
    EXPECT_THROW((void)load_session(file), std::runtime_error);
}
