// The app's GL-free session logic: settings persistence, the compute worker (newest wins, stale requests
// dropped), text -> tokens with bad input (empty, too long, invalid UTF-8), sampling filters, model loading errors.
#include "app/session/state.h"
#include "app/session/text_codec.h"
#include "app/session/worker.h"
#include "core/formats/safetensors.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <vector>
#include <mutex>

#include <optional>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

namespace fs = std::filesystem;
using namespace ts::studio;

namespace {
fs::path temp_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("ts_app_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}
}  // namespace

TEST(State, RoundTripKeepsEveryField) {
    const fs::path dir = temp_dir("state");
    UiState s;
    s.model_path = "/models/austen-gpt";
    s.remember_model("/models/a");
    s.remember_model("/models/b");
    s.remember_model("/models/a");  // moves to the front, no duplicate
    s.text = "注意力 is all you need";
    s.panel = Panel::Attention;
    s.layer = 3;
    s.head = 2;
    s.dark_theme = false;
    s.attn_temperature = 0.5f;
    s.attn_mask = MaskChoice::Sliding;
    s.sm_typed_logits = "1000, 1001, 2000";
    s.rope_interleaved = true;
    s.top_p = 0.9f;
    save_state(dir / "state.json", s);
    EXPECT_FALSE(fs::exists(dir / "state.json.tmp"));  // atomic: the temp file was renamed
    std::string warning;
    const UiState r = load_state(dir / "state.json", &warning);
    EXPECT_TRUE(warning.empty()) << warning;
    EXPECT_EQ(r.model_path, s.model_path);
    ASSERT_EQ(r.recent.size(), 2u);
    EXPECT_EQ(r.recent[0], "/models/a");
    EXPECT_EQ(r.text, s.text);
    EXPECT_EQ(r.panel, Panel::Attention);
    EXPECT_EQ(r.layer, 3);
    EXPECT_EQ(r.head, 2);
    EXPECT_FALSE(r.dark_theme);
    EXPECT_FLOAT_EQ(r.attn_temperature, 0.5f);
    EXPECT_EQ(r.attn_mask, MaskChoice::Sliding);
    EXPECT_EQ(r.sm_typed_logits, s.sm_typed_logits);
    EXPECT_TRUE(r.rope_interleaved);
    EXPECT_FLOAT_EQ(r.top_p, 0.9f);
    fs::remove_all(dir);
}

TEST(State, MissingFileGivesDefaults) {
    std::string warning;
    const UiState r = load_state("/nonexistent/dir/state.json", &warning);
    EXPECT_TRUE(warning.empty());
    EXPECT_EQ(r.panel, UiState{}.panel);
}

TEST(State, BrokenJsonGivesDefaultsWarningAndBackup) {
    const fs::path dir = temp_dir("broken");
    std::ofstream(dir / "state.json") << "{ \"text\": \"unterminated";
    std::string warning;
    const UiState r = load_state(dir / "state.json", &warning);
    EXPECT_NE(warning.find("not valid JSON"), std::string::npos) << warning;
    EXPECT_EQ(r.text, UiState{}.text);
    EXPECT_TRUE(fs::exists(dir / "state.json.broken"));
    fs::remove_all(dir);
}

// A state.json that is valid JSON but not an object (an array) is kept as .broken, never silently overwritten; a
// ui_scale ImGui cannot lay out (0.01 aborted it at every start) is clamped; wrong-type fields are named.
TEST(State, NonObjectIsKeptAsBrokenAndBadFieldsAreNamed) {
    const fs::path dir = temp_dir("array");
    std::ofstream(dir / "state.json") << "[1, 2, 3]";
    std::string warning;
    const UiState r = load_state(dir / "state.json", &warning);
    EXPECT_NE(warning.find("expected a JSON object"), std::string::npos) << warning;
    EXPECT_TRUE(fs::exists(dir / "state.json.broken"));
    EXPECT_EQ(r.text, UiState{}.text);

    std::ofstream(dir / "state.json", std::ios::trunc) << R"({"ui_scale": 0.01, "layer": "three", "text": "hi"})";
    warning.clear();
    const UiState s = load_state(dir / "state.json", &warning);
    EXPECT_FLOAT_EQ(s.ui_scale, kMinUiScale);
    EXPECT_EQ(s.text, "hi");
    EXPECT_NE(warning.find("wrong type"), std::string::npos) << warning;
    EXPECT_NE(warning.find("layer"), std::string::npos) << warning;
    std::string w2;
    const UiState big = parse_state_text(R"({"layer": 1e20, "attn_temperature": 1e300, "head": true})", "s", &w2);
    EXPECT_EQ(big.layer, UiState{}.layer);  // 1e20 does not fit an int: named, not cast
    EXPECT_FLOAT_EQ(big.attn_temperature, UiState{}.attn_temperature);
    EXPECT_EQ(big.head, UiState{}.head);    // true is not a number
    EXPECT_NE(w2.find("layer, head, attn_temperature"), std::string::npos) << w2;
    // Found by fuzz_state: a list element beyond its type (a byte of sm_paint, an int of ablated_heads).
    std::string w3;
    const UiState lists = parse_state_text(R"({"sm_paint": [1, 0, 0, 1e125], "sm_paint_n": 2,
                                               "ablated_heads": [[3e40, 1]], "recent": ["a"]})", "s", &w3);
    EXPECT_TRUE(lists.sm_paint.empty());
    EXPECT_TRUE(lists.ablated_heads.empty());
    EXPECT_EQ(lists.recent, std::vector<std::string>{"a"});
    EXPECT_NE(w3.find("sm_paint"), std::string::npos) << w3;
    EXPECT_NE(w3.find("ablated_heads"), std::string::npos) << w3;
    EXPECT_FLOAT_EQ(parse_state_text(R"({"ui_scale": 0})", "s").ui_scale, 0.0f);  // 0 = the monitor's scale
    EXPECT_FLOAT_EQ(parse_state_text(R"({"ui_scale": 99})", "s").ui_scale, kMaxUiScale);
    // 100k levels of nesting: refused with the file named, not a stack overflow at every start.
    EXPECT_THROW((void)parse_state_text("{\"recent\": " + std::string(100000, '[') + "}", "s"), std::runtime_error);
    fs::remove_all(dir);
}

TEST(State, WrongTypesAndOutOfRangeValuesAreRepaired) {
    nlohmann::json j = {{"layer", "three"}, {"head", -5}, {"attn_temperature", 1e9}, {"text", 42}, {"top_k", 7}};
    UiState s;
    from_json(j, s);
    EXPECT_EQ(s.layer, 0);                     // wrong type: default kept
    EXPECT_EQ(s.head, 0);                      // clamped
    EXPECT_FLOAT_EQ(s.attn_temperature, 10.0f);
    EXPECT_EQ(s.text, UiState{}.text);
    EXPECT_EQ(s.top_k, 7);
}

TEST(State, ConfigDirFollowsXdg) {
    const char* old = std::getenv("XDG_CONFIG_HOME");
    const std::string saved = old ? old : "";
    ::setenv("XDG_CONFIG_HOME", "/tmp/xdgtest", 1);
    EXPECT_EQ(config_dir(), fs::path("/tmp/xdgtest/transformer-studio"));
    if (old) ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
    else ::unsetenv("XDG_CONFIG_HOME");
}

TEST(Worker, NewestWinsAndStaleRequestsAreDropped) {
    std::atomic<int> runs{0};
    std::atomic<bool> release{false};
    ForwardWorker w([&](const ForwardRequest& r, uint64_t id) {
        ++runs;
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto s = std::make_shared<Snapshot>();
        s->id = id;
        s->temperature = r.temperature;
        return std::shared_ptr<const Snapshot>(s);
    });
    ForwardRequest r;
    r.temperature = 0.0f;
    w.submit(r);  // starts running (blocked until release)
    while (runs.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    uint64_t last = 0;
    for (int i = 1; i <= 50; ++i) {
        r.temperature = float(i);
        last = w.submit(r);  // each replaces the pending one
    }
    release = true;
    ASSERT_TRUE(w.wait_idle(30.0));
    EXPECT_EQ(runs.load(), 2);     // the first and the newest; 49 stale ones never ran
    EXPECT_EQ(w.dropped(), 49u);
    EXPECT_EQ(w.completed(), 2u);
    const auto s = w.latest();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->id, last);
    EXPECT_FLOAT_EQ(s->temperature, 50.0f);
}

// Beside the training lab the worker keeps no thread that outlives a request (so no idle OpenMP pool): switching
// on moves it to a fresh thread and runs each request on a thread of its own; a request waiting at the switch still
// runs; exceptions are still results; switching off runs requests on one thread again.
TEST(Worker, SharingTheCoresRunsEachRequestOnAThreadOfItsOwn) {
    std::mutex mu;
    std::vector<pid_t> ran_on;  // kernel thread ids (std::thread::id values are reused once a thread is joined)
    std::atomic<bool> release{true};
    ForwardWorker w([&](const ForwardRequest& r, uint64_t id) -> std::shared_ptr<const Snapshot> {
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        {
            std::lock_guard lk(mu);
            ran_on.push_back(gettid());
        }
        if (r.temperature < 0) throw std::runtime_error("boom");
        auto s = std::make_shared<Snapshot>();
        s->id = id;
        return s;
    });
    const auto run_two = [&] {
        ran_on.clear();
        for (int i = 0; i < 2; ++i) {
            w.submit(ForwardRequest{});
            ASSERT_TRUE(w.wait_idle(30.0));
        }
    };
    run_two();
    ASSERT_EQ(ran_on.size(), 2u);
    EXPECT_EQ(ran_on[0], ran_on[1]);  // the worker's own thread
    const pid_t worker_thread = ran_on[0];

    release = false;
    const uint64_t waiting = w.submit(ForwardRequest{});  // held inside the run function
    std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        release = true;
    });
    w.set_share_cores(true);  // does not wait: the running request ends on the old thread, then a fresh one takes over
    releaser.join();
    ASSERT_TRUE(w.wait_idle(30.0));
    EXPECT_EQ(w.latest()->id, waiting);
    run_two();
    ASSERT_EQ(ran_on.size(), 2u);
    EXPECT_NE(ran_on[0], ran_on[1]);
    EXPECT_NE(ran_on[0], worker_thread);
    ForwardRequest bad;
    bad.temperature = -1;
    w.submit(bad);
    ASSERT_TRUE(w.wait_idle(30.0));
    EXPECT_EQ(w.latest()->error, "boom");

    w.set_share_cores(false);
    run_two();
    ASSERT_EQ(ran_on.size(), 2u);
    EXPECT_EQ(ran_on[0], ran_on[1]);
}

TEST(Worker, ExceptionsBecomeSnapshotErrors) {
    ForwardWorker w([](const ForwardRequest&, uint64_t) -> std::shared_ptr<const Snapshot> {
        throw std::runtime_error("boom");
    });
    w.submit(ForwardRequest{});
    ASSERT_TRUE(w.wait_idle(30.0));
    ASSERT_TRUE(w.latest());
    EXPECT_EQ(w.latest()->error, "boom");
}

TEST(Worker, RunsTheDemoModelAndRecordsTheTrace) {
    const LoadedModel lm = make_demo_model();
    EXPECT_TRUE(lm.random_weights);
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text("Hello, 世界", *lm.codec, lm.model->config().max_seq_len));
    ForwardWorker w;
    w.submit(r);
    ASSERT_TRUE(w.wait_idle(60.0));
    const auto s = w.latest();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->error.empty()) << s->error;
    const int T = int(r.tokens->ids.size());
    EXPECT_EQ(T, 13);  // 7 ASCII bytes + 2 × 3 UTF-8 bytes
    const ts::Tensor* p = s->find("dec.0.attn.probs");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->shape, (std::vector<int64_t>{4, T, T}));
    EXPECT_EQ(s->logits.rows(), T);
    ASSERT_EQ(s->lens_argmax.size(), 4u);  // logit lens: one row per layer
    EXPECT_EQ(int(s->lens_argmax[0].size()), T);
    // Causal: a query never attends to a later key.
    for (int h = 0; h < 4; ++h)
        for (int t = 0; t < T; ++t)
            for (int k = t + 1; k < T; ++k) EXPECT_EQ(p->data[size_t((h * T + t) * T + k)], 0.0f);
}

// Without the lens the forward computes the last position's logits only (or none, ForwardRequest::logits = false);
// every other row comes on request from the final hidden states and equals a forward that computed them all
// (GPT-2-style tied head: the demo model; and the untied-head Llama-style golden model). With the lens on, a forward
// without logits still ends with every row (the lens's last layer).
TEST(Worker, LogitsRowsOnRequestEqualEveryRowFromTheForward) {
    for (const bool golden : {false, true}) {
        const LoadedModel lm = golden ? load_model_folder(ts::test::golden_path("hf_llama"), {}) : make_demo_model();
        ForwardRequest r;
        r.model = lm.model;
        r.codec = lm.codec;
        r.logit_lens = false;
        r.tokens = std::make_shared<const TokenizedText>(tokenize_text("The cat sat", *lm.codec, lm.model->config().max_seq_len));
        const auto last_only = run_forward_request(r, 1);
        r.logits = false;
        const auto none = run_forward_request(r, 2);
        r.logit_lens = true;
        const auto lens_only = run_forward_request(r, 3);
        r.logit_lens = false;
        r.logits = true;
        r.all_logits = true;
        const auto every = run_forward_request(r, 4);
        ASSERT_TRUE(last_only->error.empty()) << last_only->error;
        ASSERT_TRUE(none->error.empty()) << none->error;
        const int T = int(r.tokens->ids.size());
        ASSERT_GT(T, 2);
        EXPECT_EQ(last_only->logits.rows(), 1);
        EXPECT_EQ(none->logits.rows(), 0);
        EXPECT_EQ(lens_only->logits.rows(), T);
        ASSERT_EQ(every->logits.rows(), T);
        EXPECT_EQ(last_only->logits_positions(), T);
        EXPECT_EQ(none->logits_positions(), T);
        EXPECT_TRUE(last_only->lens_argmax.empty());
        for (const Snapshot* s : {last_only.get(), none.get(), lens_only.get()})
            for (int q = 0; q < T; ++q) {
                const std::span<const float> row = s->logits_row(q);
                ASSERT_EQ(row.size(), size_t(every->logits.cols())) << q;
                const Eigen::Map<const ts::RowVectorF> a(row.data(), Eigen::Index(row.size()));
                const float scale = 1.0f + every->logits.row(q).cwiseAbs().maxCoeff();
                EXPECT_LE((a - every->logits.row(q)).cwiseAbs().maxCoeff(), 1e-5f * scale)
                    << (golden ? "llama " : "demo ") << "snapshot " << s->id << " position " << q;
            }
        // Asked twice: the same kept row.
        EXPECT_EQ(last_only->logits_row(0).data(), last_only->logits_row(0).data());
        EXPECT_EQ(none->logits_row(T - 1).data(), none->logits_row(T - 1).data());
        EXPECT_TRUE(none->logits_row(T).empty());
    }
}

// The target strip's probabilities: p[q] is the softmax of position q's logits at the next token's id (computed here
// in double from a forward that computed every row), one per token after the first; none without logits.
TEST(Worker, NextTokenProbsAreEachNextTokensSoftmaxProbability) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r;
    r.model = lm.model;
    r.codec = lm.codec;
    r.logit_lens = false;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text("The cat sat on the mat", *lm.codec, 128));
    r.all_logits = true;
    const auto every = run_forward_request(r, 1);
    r.all_logits = false;
    const auto last_only = run_forward_request(r, 2);
    ASSERT_TRUE(every->error.empty()) << every->error;
    const int T = int(r.tokens->ids.size());
    const std::vector<float> p = last_only->next_token_probs();
    ASSERT_EQ(int(p.size()), T - 1);
    for (int q = 0; q + 1 < T; ++q) {
        const auto row = every->logits.row(q);
        const double mx = row.maxCoeff();
        double z = 0;
        for (Eigen::Index v = 0; v < row.size(); ++v) z += std::exp(double(row(v)) - mx);
        const double want = std::exp(double(row(r.tokens->ids[size_t(q) + 1])) - mx) / z;
        EXPECT_NEAR(p[size_t(q)], want, 1e-5 * want + 1e-7) << q;
    }
    Snapshot empty;
    EXPECT_TRUE(empty.next_token_probs().empty());
}

TEST(Worker, EmptyTextIsNotAnError) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r;
    r.model = lm.model;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text("", *lm.codec, 128));
    const auto s = run_forward_request(r, 1);
    EXPECT_TRUE(s->error.empty());
    EXPECT_FALSE(s->trace);
}

TEST(Worker, GenerateSamplesRequestedCount) {
    const LoadedModel lm = make_demo_model();
    ForwardRequest r;
    r.kind = ForwardRequest::Kind::Generate;
    r.model = lm.model;
    r.codec = lm.codec;
    r.tokens = std::make_shared<const TokenizedText>(tokenize_text("ab", *lm.codec, 128));
    r.generate_tokens = 5;
    r.sampling.top_k = 3;
    const auto s = run_forward_request(r, 1);
    ASSERT_TRUE(s->error.empty()) << s->error;
    EXPECT_EQ(s->generated.size(), 5u);
    EXPECT_EQ(s->generated_text.size(), 5u);  // byte codec: one byte per id
}

TEST(Text, ByteFallbackSpansAndLabels) {
    const auto codec = make_byte_codec(256);
    const TokenizedText t = tokenize_text("a 中", *codec, 100);
    EXPECT_TRUE(t.ids_only);
    ASSERT_EQ(t.ids.size(), 5u);
    EXPECT_EQ(t.ids[0], 'a');
    EXPECT_EQ(t.ids[2], 0xE4);
    EXPECT_EQ(t.pieces[1].label, "\xC2\xB7");  // space shown as a middle dot
    EXPECT_EQ(t.pieces[2].label, "<E4>");      // a lone byte of a multi-byte character
    EXPECT_EQ(t.pieces[4].byte_end, 5u);
    EXPECT_FALSE(t.notices.empty());           // says ids-only mode
}

TEST(Text, TruncatesToMaxSeqLenWithNotice) {
    const auto codec = make_byte_codec(256);
    const std::string text(300, 'x');
    const TokenizedText t = tokenize_text(text, *codec, 128);
    EXPECT_TRUE(t.truncated);
    EXPECT_EQ(t.ids.size(), 128u);
    EXPECT_EQ(t.total_tokens, 300u);
    EXPECT_EQ(t.text, text);  // nothing typed is lost
    bool said = false;
    for (const auto& n : t.notices) said |= n.find("128 of 300") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(Text, EmptyAndInvalidUtf8) {
    const auto codec = make_byte_codec(256);
    const TokenizedText e = tokenize_text("", *codec, 128);
    EXPECT_TRUE(e.ids.empty());
    EXPECT_FALSE(e.notices.empty());
    const std::string bad = std::string("ok") + char(0xFF) + char(0xC3);
    size_t off = 0;
    EXPECT_FALSE(is_valid_utf8(bad, &off));
    EXPECT_EQ(off, 2u);
    EXPECT_TRUE(is_valid_utf8("héllo 世界"));
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
    EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));      // overlong
    EXPECT_EQ(sanitize_utf8(bad), "ok\xEF\xBF\xBD\xEF\xBF\xBD");
    const TokenizedText t = tokenize_text(bad, *codec, 128);
    EXPECT_EQ(t.ids.size(), 4u);
    EXPECT_EQ(t.pieces[2].label, "<FF>");
    bool said = false;
    for (const auto& n : t.notices) said |= n.find("not valid UTF-8") != std::string::npos;
    EXPECT_TRUE(said);
    EXPECT_EQ(printable_label("a\nb\t"), "a\\nb\\t");
}

TEST(Text, SmallVocabularyWrapsIds) {
    const auto codec = make_byte_codec(100);
    const TokenizedText t = tokenize_text("z", *codec, 8);
    ASSERT_EQ(t.ids.size(), 1u);
    EXPECT_EQ(t.ids[0], 'z' % 100);
}

TEST(Models, MissingOrBrokenFolderThrowsWithPath) {
    EXPECT_THROW((void)load_model_folder(""), std::runtime_error);
    try {
        (void)load_model_folder("/nonexistent/model");
        FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/model"), std::string::npos);
    }
    const fs::path dir = temp_dir("broken_model");
    std::ofstream(dir / "config.json") << "{ not json";
    EXPECT_ANY_THROW((void)load_model_folder(dir.string()));
    fs::remove_all(dir);
}

TEST(Models, LoaderReportsFailureAndSuccess) {
    const fs::path dir = temp_dir("model_ok");
    const LoadedModel demo = make_demo_model();
    ts::save_model_dir(dir, *demo.model);
    ModelLoader loader;
    ASSERT_TRUE(loader.start("/nonexistent/model"));
    std::optional<ModelLoader::Result> r;
    for (int i = 0; i < 3000 && !r; ++i) {
        r = loader.poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->model);
    EXPECT_FALSE(r->error.empty());
    ASSERT_TRUE(loader.start(dir.string()));
    r.reset();
    for (int i = 0; i < 3000 && !r; ++i) {
        r = loader.poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->model) << r->error;
    EXPECT_EQ(r->model->model->config().n_kv_heads, 2);
    EXPECT_TRUE(r->model->codec->ids_only());  // no tokenizer.json in the folder
    fs::remove_all(dir);
}

TEST(Models, NonfiniteWeightsOpenWithWarningsNamingTheTensor) {
    // tests/golden/nonfinite_model: one NaN and one +Inf in dec.0.attn.wq (tests/reference/make_nonfinite_fixture.py).
    const LoadedModel lm = load_model_folder((fs::path(TS_GOLDEN_DIR) / "nonfinite_model").string());
    ASSERT_TRUE(lm.model);
    ASSERT_EQ(lm.weight_warnings.size(), 1u);
    EXPECT_NE(lm.weight_warnings[0].find("tensor 'dec.0.attn.wq' (8, 8) holds 2 non-finite values"), std::string::npos)
        << lm.weight_warnings[0];
    EXPECT_EQ(lm.weight_warnings, lm.model->weight_warnings());
    EXPECT_TRUE(make_demo_model().weight_warnings.empty());
    EXPECT_TRUE(load_model_folder((fs::path(TS_GOLDEN_DIR) / "hf_gpt2").string()).weight_warnings.empty());
}

// One knob, one value (#28): with "apply to the model" on, the sidebar's attention knobs and the Softmax lab's are
// the same setting. Before, the lab copied its values over the sidebar's every frame, so the sidebar temperature
// could not be dragged and a value set elsewhere was reset on returning to the Softmax tab.
TEST(State, ApplyToModelLinksTheSidebarAndTheSoftmaxLab) {
    ts::studio::UiState st;
    std::optional<ts::studio::AttentionKnobs> link;
    st.sm_temperature = 3.38f;
    st.sm_mask = MaskChoice::None;
    st.attn_temperature = 0.746f;
    ts::studio::link_attention_knobs(st, link);  // off: independent
    EXPECT_FLOAT_EQ(st.attn_temperature, 0.746f);
    EXPECT_FALSE(link);
    st.apply_to_model = true;
    ts::studio::link_attention_knobs(st, link);  // switched on: the lab's values go to the model
    EXPECT_FLOAT_EQ(st.attn_temperature, 3.38f);
    EXPECT_EQ(st.attn_mask, MaskChoice::None);
    st.attn_temperature = 0.5f;  // the sidebar slider moves
    st.attn_mask = MaskChoice::Causal;
    ts::studio::link_attention_knobs(st, link);
    EXPECT_FLOAT_EQ(st.attn_temperature, 0.5f);  // it stays where the student put it
    EXPECT_FLOAT_EQ(st.sm_temperature, 0.5f);    // and the lab follows
    EXPECT_EQ(st.sm_mask, MaskChoice::Causal);
    ts::studio::link_attention_knobs(st, link);  // the next frame changes nothing
    EXPECT_FLOAT_EQ(st.attn_temperature, 0.5f);
    st.sm_temperature = 2.0f;  // the lab's slider moves
    st.sm_window = 9;
    ts::studio::link_attention_knobs(st, link);
    EXPECT_FLOAT_EQ(st.attn_temperature, 2.0f);
    EXPECT_EQ(st.attn_window, 9);
    st.apply_to_model = false;  // off again: the lab can explore without touching the model
    ts::studio::link_attention_knobs(st, link);
    st.sm_temperature = 7.0f;
    ts::studio::link_attention_knobs(st, link);
    EXPECT_FLOAT_EQ(st.attn_temperature, 2.0f);
}
