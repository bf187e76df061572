// Ollama's local store (core/formats/ollama.h): names resolve to the GGUF blob their manifest names, the store lists its
// models by the names Ollama prints, and a broken manifest or a missing blob is named. The store is built in a
// temporary folder with tests/golden/gguf/llama_q8_0.gguf as the blob.
#include "core/formats/gguf_model.h"
#include "core/formats/ollama.h"
#include "tests/test_util.h"

#include <fstream>

namespace ts {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

void write_manifest(const fs::path& store, const std::string& rel, const std::string& media = "application/vnd.ollama.image.model") {
    fs::create_directories((store / "manifests" / rel).parent_path());
    std::ofstream(store / "manifests" / rel)
        << R"({"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:)" << kDigest
        << R"(","size":10},{"mediaType":")" << media << R"(","digest":"sha256:)" << kDigest << R"(","size":53344}]})";
}

TEST(Ollama, NamesResolveToTheirBlobAndTheStoreListsThem) {
    test::TempDir dir("ts_ollama_test");
    const fs::path store = dir.path;
    fs::create_directories(store / "blobs");
    fs::copy_file(test::golden_path("gguf/llama_q8_0.gguf"), store / "blobs" / (std::string("sha256-") + kDigest));
    write_manifest(store, "registry.ollama.ai/library/tiny/q8");
    write_manifest(store, "registry.ollama.ai/library/tiny/latest");
    write_manifest(store, "registry.ollama.ai/someone/other/v1");

    const auto blob = resolve_ollama_model("tiny:q8", store);
    ASSERT_TRUE(blob);
    EXPECT_EQ(blob->filename().string(), std::string("sha256-") + kDigest);
    EXPECT_TRUE(resolve_ollama_model("tiny", store));                // tag "latest"
    EXPECT_TRUE(resolve_ollama_model("someone/other:v1", store));    // a namespace
    EXPECT_FALSE(resolve_ollama_model("tiny:q4", store));            // no such tag
    EXPECT_FALSE(resolve_ollama_model("/abs/path", store));          // a path, not a name
    EXPECT_EQ(load_gguf_model(*blob)->config().n_layers, 2);

    std::vector<std::string> names;
    for (const OllamaModel& m : list_ollama_models(store)) names.push_back(m.name);
    EXPECT_EQ(names, (std::vector<std::string>{"someone/other:v1", "tiny:latest", "tiny:q8"}));

    write_manifest(store, "registry.ollama.ai/library/notext/latest", "application/vnd.ollama.image.license");
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)resolve_ollama_model("notext", store); }),
                               {"ollama model 'notext'", "names no model layer"}));
    fs::remove(store / "blobs" / (std::string("sha256-") + kDigest));
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)resolve_ollama_model("tiny:q8", store); }),
                               {"ollama model 'tiny:q8'", "is missing (pull it again)"}));
    std::ofstream(store / "manifests/registry.ollama.ai/library/tiny/q8") << "{not json";
    EXPECT_TRUE(test::contains(test::error_of([&] { (void)resolve_ollama_model("tiny:q8", store); }), {"ollama model 'tiny:q8'"}));
    EXPECT_TRUE(list_ollama_models(store / "nowhere").empty());
}

TEST(Ollama, NamesAndPathsAreTold) {
    for (const char* name : {"llama3.2:1b", "qwen2.5", "user/model:tag", "hf.co/org/model:Q4_K_M"})
        EXPECT_TRUE(looks_like_ollama_name(name)) << name;
    for (const char* path : {"/tmp/x.gguf", "./model", "~/m", "a:b:c", "a b", "", "x:", "../up"})
        EXPECT_FALSE(looks_like_ollama_name(path)) << path;
}

}  // namespace
}  // namespace ts
