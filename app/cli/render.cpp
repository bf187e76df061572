// `transformer-studio render`: writes any panel's figures as PNG (offscreen GL through EGL, no X server), SVG or CSV
// (pure CPU: no EGL needed) with the same figure code as the window.
//   render --view list
//   render [--model DIR] [--text T] --view NAME [view options] --out FILE.(png|svg|csv)
//          [--width W --height H --scale S --theme light|dark --transparent --columns N --figure K]
//          [--session FILE] [--set key=value ...] [--save-session FILE] [--repeat N] [--lang en|zh]
#include "app/cli/cli.h"
#include "app/cli/args.h"
#include "app/gfx/egl_context.h"
#include "app/gfx/raster.h"
#include "app/i18n/tr.h"
#include "app/plot/writers.h"
#include "app/figures/views.h"
#include "core/kernels/threads.h"
#include "app/session/limits.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace ts::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

studio::LoadedModel load_model_for(const studio::UiState& st, const std::string& exe, bool quiet) {
    if (!st.model_path.empty()) return studio::load_model_folder(st.model_path);  // explicit: failing is an error
    const std::string def = studio::find_default_model_dir(exe);
    if (!def.empty()) return studio::load_model_folder(def);
    if (!quiet) std::fprintf(stderr, "note: no bundled model found (assets/models); using the random-weight demo model\n");
    return studio::make_demo_model();
}

}  // namespace

int run_render(int argc, char** argv) {
    static const char* const kUsage =
        "usage: transformer-studio render [--model DIR] [--text T] --view NAME --out FILE.(png|svg|csv)\n"
        "         [--width PX] [--height PX] [--scale X] [--theme light|dark] [--transparent] [--columns N]\n"
        "         [--figure K] [--session FILE] [--save-session FILE] [--set key=value...] [--repeat N] [--quiet] [--threads N]\n"
        "         [--lang en|zh]   language of titles, labels and notes (default en)\n"
        "         [view options: --layer --head --query ... (see --view list)]\n"
        "         encoder-decoder models: [--source T (= --text)] [--target T] [--translate [--beam N] [--to en|zh]]\n"
        "       transformer-studio render --view list\n"
        "  Draws one view of the app headless (PNG through EGL, SVG and CSV without GL) with the same figure code\n"
        "  as the window. --view list names every view and its options.\n";
    if (print_help_if_asked(argc, argv, 2, kUsage)) return 0;
    const auto t0 = std::chrono::steady_clock::now();
    std::set<std::string> options = {"model",  "text",         "view",    "out",     "width",
                                     "height", "scale",        "theme",   "session", "columns",
                                     "figure", "save-session", "repeat",  "source",  "target",
                                     "beam",   "to",           "threads", "lang",    "quant-activations"};
    std::set<std::string> flags = {"transparent", "quiet", "translate"};
    for (const auto& o : figures::view_value_options()) options.insert(o);
    for (const auto& f : figures::view_flag_options()) flags.insert(f);
    std::set<std::string> repeatable = {"set"};
    for (const auto& m : figures::view_multi_options()) repeatable.insert(m);
    const Args args(argc, argv, 2, options, flags, repeatable);
    if (!args.positional().empty()) throw std::invalid_argument("unexpected argument '" + args.positional().front() + "'");
    const bool quiet = args.flag("quiet");
    apply_compute_options(args);

    if (args.get("view") == "list") {
        std::fputs(figures::describe_views().c_str(), stdout);
        return 0;
    }

    // State: a session file, else the defaults; then the command line on top.
    studio::UiState st;
    if (args.has("session")) st = figures::load_session(args.get("session"));
    if (args.has("text") && args.has("source")) throw std::invalid_argument("--source and --text name the same text; give one");
    if (args.has("text")) st.text = args.get("text");
    if (args.has("source")) st.text = args.get("source");
    if (args.has("target") && args.flag("translate"))
        throw std::invalid_argument("--translate produces the target; it does not combine with --target");
    if (args.has("to")) {
        st.translate_to = args.get("to");
        if (st.translate_to != "en" && st.translate_to != "zh" && st.translate_to != "auto")
            throw std::invalid_argument("--to expects en, zh or auto, got '" + st.translate_to + "'");
    }
    if (args.has("beam")) {
        st.decode_beam = int(args.integer("beam", 1, 1, studio::kMaxBeam));
    }
    if (args.has("model")) st.model_path = args.get("model");
    std::string view = args.get("view");
    if (view.empty()) view = !st.view.empty() ? st.view : figures::default_view_for_panel(st.panel);
    const figures::ViewInfo* info = figures::find_view(view);
    if (!info) throw std::invalid_argument("unknown view '" + view + "' (transformer-studio render --view list shows them)");
    // --target is the Causal views' target token where the view has that option, else the encoder–decoder target.
    const bool target_is_token =
        std::find(info->options.begin(), info->options.end(), std::string("target")) != info->options.end();
    if (args.has("target") && !target_is_token) st.target_text = args.get("target");
    for (const auto& o : figures::view_value_options())
        if (args.has(o) && !(o == "target" && !target_is_token)) figures::apply_view_option(st, view, o, args.get(o));
    for (const auto& f : figures::view_flag_options())
        if (args.flag(f)) figures::apply_view_option(st, view, f, "true");
    for (const auto& a : args.all("set")) figures::set_state_field(st, a);
    // The forward sets the products' arithmetic from the state (run_forward_request): the option is the state's field.
    if (args.has("quant-activations")) st.quant_activations = args.get("quant-activations");
    for (const auto& m : figures::view_multi_options())
        for (const auto& a : args.all(m)) figures::apply_view_option(st, view, m, a);
    st.view = view;
    // Interface language of the figure text: --lang, else the session's, else English (reproducible exports).
    const std::string lang = i18n::normalize_language(args.get("lang", st.language.empty() ? "en" : st.language));
    if (lang.empty()) throw std::invalid_argument("--lang expects en or zh, got '" + args.get("lang") + "'");
    if (std::string why; !i18n::set_language(lang, &why)) throw std::runtime_error(why);
    st.language = lang;

    // Output options.
    const std::string out = args.required("out");
    const plot::ExportFormat format = plot::export_format_from_path(out);
    plot::ExportOptions eo;
    const bool from_session = args.has("session");
    eo.width = int(args.integer("width", from_session ? st.export_width : 0, 16, studio::kMaxExportPixels));
    eo.height = int(args.integer("height", from_session ? st.export_height : 0, 16, studio::kMaxExportPixels));
    eo.scale = float(
        args.real("scale", from_session ? st.export_scale : 1.0, studio::kMinExportScale, studio::kMaxExportScale));
    const std::string theme = args.get("theme", from_session && !st.export_light ? "dark" : "light");
    if (theme != "light" && theme != "dark") throw std::invalid_argument("--theme expects light or dark, got '" + theme + "'");
    eo.dark = theme == "dark";
    eo.transparent = args.flag("transparent") || (from_session && st.export_transparent && !args.has("theme"));
    eo.columns = int(args.integer("columns", 0, 0, 64));

    // Model and forward pass (only what the view needs).
    studio::LoadedModel model;
    std::shared_ptr<const studio::Snapshot> snap;
    const bool needs_model = info->needs_forward || view == "parameters" || view == "kv-cache";
    const bool typed_softmax = view.rfind("softmax", 0) == 0 && st.sm_use_typed;
    if (needs_model && !typed_softmax) {
        model = load_model_for(st, argc > 0 ? argv[0] : "", quiet);
        print_warnings("render", model.weight_warnings);
        if (!model.tokenizer_warning.empty()) print_warnings("render", {model.tokenizer_warning});
        if (model.model) figures::check_view_knobs(st, view, model.model->config());
        if (info->needs_forward) {
            snap = figures::run_forward_now(st, model, args.flag("translate"), info->panel);
            if (!snap->error.empty()) throw std::runtime_error("the forward pass failed: " + snap->error);
            if (snap->translation && snap->tokens && !quiet)
                std::fprintf(stderr, "translation: %s\n", snap->tokens->text.c_str());
            if (snap->tokens)
                for (const auto& n : snap->tokens->notices)
                    if (!quiet) std::fprintf(stderr, "note: %s\n", n.c_str());
        }
    }
    figures::ViewFigures vf = figures::build_view(view, st, snap.get(), model.model ? &model : nullptr);
    if (args.has("figure")) {
        const int k = int(args.integer("figure", 1, 1, 1 << 20));
        if (k < 1 || k > int(vf.figures.size()))
            throw std::invalid_argument("--figure must be 1.." + std::to_string(vf.figures.size()) + " for view " + view);
        vf.figures = {vf.figures[size_t(k - 1)]};
        vf.columns = 1;
    }
    if (eo.columns == 0) eo.columns = vf.columns;
    const bool multi = vf.figures.size() > 1;
    if (eo.width == 0) eo.width = multi ? 1920 : 1200;
    if (eo.height == 0) eo.height = multi ? 1080 : 800;
    st.export_width = eo.width;
    st.export_height = eo.height;
    st.export_scale = eo.scale;
    st.export_light = !eo.dark;
    st.export_transparent = eo.transparent;
    st.export_format = format;

    if (format == plot::ExportFormat::Png) {
        std::string why;
        auto gl = gfx::HeadlessGl::create(&why);
        if (!gl) throw std::runtime_error("PNG export needs EGL + OpenGL 3.3 (" + why + "); SVG and CSV work without it");
        const int repeat = int(args.integer("repeat", 1, 1, studio::kMaxRepeat));
        try {
            for (int i = 0; i < repeat; ++i) {
                const auto t1 = std::chrono::steady_clock::now();
                gfx::write_figures(vf.figures, eo, out);
                if (repeat > 1) std::fprintf(stderr, "render %d: %.1f ms\n", i + 1, 1000.0 * seconds_since(t1));
            }
        } catch (...) {
            gfx::release_raster_resources();
            throw;
        }
        gfx::release_raster_resources();
    } else if (format == plot::ExportFormat::Svg) {
        plot::write_file_atomic(out, plot::figures_to_svg(vf.figures, eo));
    } else {
        plot::write_file_atomic(out, plot::figures_to_csv(vf.figures));
    }
    if (args.has("save-session")) figures::save_session(args.get("save-session"), st);
    if (!quiet)
        std::printf("wrote %s (view %s, %zu figure%s, %dx%d, %.2f s)\n", out.c_str(), view.c_str(), vf.figures.size(),
                    multi ? "s" : "", eo.width, eo.height, seconds_since(t0));
    return 0;
}

}  // namespace ts::cli
