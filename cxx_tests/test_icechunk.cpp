// zarr.hpp over Icechunk repositories: create a repository, write through a branch session, commit,
// read a tag and a snapshot back, discard, a write through a fork merged and committed (a fork cannot
// commit itself), and a commit to a tag refused (ZARR_ERR_READ_ONLY). Built
// without the `icechunk` feature, creating the repository is ZARR_ERR_UNSUPPORTED (checked instead).
#include <zarr.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

int checks = 0, failures = 0;

#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        ++checks;                                                                          \
        if (!(cond)) {                                                                     \
            ++failures;                                                                    \
            std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                  \
    } while (0)

template <class F> zarr_status status_of(F f) {
    try {
        f();
        return ZARR_OK;
    } catch (const zarr::Error &e) {
        return e.status();
    }
}

}  // namespace

int main() {
    const char *base = std::getenv("ZARR_TEST_TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/zarr-cxx-icechunk-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return 2;
    const std::string repo = "icechunk://" + std::string(buf.data()) + "/repo";

    std::string first;
    zarr_status s = status_of([&] { first = zarr::icechunk_create_repository(repo); });
    if (s == ZARR_ERR_UNSUPPORTED) {
        std::printf("built without the icechunk feature: ZARR_ERR_UNSUPPORTED checked\n");
        return 0;
    }
    EXPECT(s == ZARR_OK && first.size() == 20);
    std::string c1, c2, c3;
    {
        zarr::Group root = zarr::Group::create(repo, R"({"from":"C++"})");
        zarr::Array a = root.create_array("a", zarr::ArraySpec::of<int32_t>({6, 8}).chunks({3, 4}));
        std::vector<int32_t> v(48);
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i) * 3;
        a.write(v);
        EXPECT(root.icechunk_has_changes());
        c1 = root.icechunk_commit("one");
        EXPECT(c1.size() == 20 && !root.icechunk_has_changes() && root.icechunk_snapshot_id() == c1);
        a.write({0, 0}, {1, 1}, std::vector<int32_t>{-5});
        c2 = root.icechunk_commit("two");
        EXPECT(c2 != c1);
        a.write({5, 7}, {1, 1}, std::vector<int32_t>{99});
        root.icechunk_discard();
        EXPECT(!root.icechunk_has_changes());
        EXPECT(zarr::icechunk_create_tag(repo, "one", c1) == c1);
        EXPECT(zarr::icechunk_create_branch(repo, "dev") == c2);
        // fork and merge: what another process would write, merged and committed once
        const std::string fork = root.icechunk_fork();
        {
            zarr::Group f = zarr::Group::icechunk_open_fork(fork);
            f.open_array("a").write({5, 0}, {1, 1}, std::vector<int32_t>{77});
            EXPECT(!root.icechunk_has_changes());
            EXPECT(status_of([&] { f.icechunk_commit("a fork"); }) == ZARR_ERR_INVALID_ARGUMENT);
            root.icechunk_merge(f.icechunk_fork_changes());
        }
        EXPECT(root.icechunk_has_changes());
        c3 = root.icechunk_commit("merged");
        EXPECT(status_of([&] { root.icechunk_merge("not a fork"); }) == ZARR_ERR_INVALID_ARGUMENT);
    }
    std::vector<int32_t> tagged = zarr::Array::open(repo + "!/a?tag=one").read<int32_t>();
    EXPECT(tagged.size() == 48 && tagged[0] == 0 && tagged[47] == 141);
    std::vector<int32_t> now = zarr::Array::open(repo + "!/a?snapshot=" + c2).read<int32_t>();
    EXPECT(now.size() == 48 && now[0] == -5 && now[47] == 141);
    std::vector<int32_t> dev = zarr::Array::open(repo + "!/a?branch=dev").read<int32_t>();
    EXPECT(dev == now);
    std::vector<int32_t> merged = zarr::Array::open(repo + "!/a?snapshot=" + c3).read<int32_t>();
    now[40] = 77;
    EXPECT(merged == now);
    zarr::Group t = zarr::Group::open(repo + "?tag=one", zarr::Mode::read_write);
    EXPECT(status_of([&] { t.icechunk_commit("to a tag"); }) == ZARR_ERR_READ_ONLY);
    EXPECT(status_of([&] { zarr::Array::open(repo + "!/a?branch=none"); }) == ZARR_ERR_NOT_FOUND);
    std::printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
