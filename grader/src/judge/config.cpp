// config.cpp — reading and checking the [bench] and [scoring] sections of course.toml with toml++
// (see config.h). Every check names the key and shows the value it got.
#include "judge/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <toml++/toml.h>

namespace gemmlab {

const char* interpolation_name(Interpolation i) { return i == Interpolation::log ? "log" : "linear"; }

double ScoringConfig::max_points() const {
    double total = 0;
    for (const auto& [key, rubric] : stages)
        if (!rubric.extra_credit)
            for (Precision p : {Precision::f32, Precision::f64})
                total += rubric.correctness_points.get(p) + rubric.performance_points.get(p);
    return total;
}

namespace {

// ---- defaults ----------------------------------------------------------------------------------
//
// Only the settings: the rubric (points, targets, graded shapes) lives in course.toml alone.
constexpr const char* kDefaultBenchShape = "4096x4096x4096";

Shape must_parse(const std::string& text) {
    std::string err;
    auto s = parse_shape(text, &err);
    if (!s) throw std::logic_error("bad built-in shape: " + err);
    return *s;
}

// ---- reading -----------------------------------------------------------------------------------

// Edit distance, to suggest the key that was probably meant.
size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

// What a value looks like in a message: strings quoted, numbers as written, else its kind.
std::string show(const toml::node& n) {
    std::ostringstream os;
    if (auto s = n.value<std::string>(); s && n.is_string()) os << '"' << *s << '"';
    else if (n.is_integer()) os << *n.value<int64_t>();
    else if (n.is_floating_point()) os << *n.value<double>();
    else if (n.is_boolean()) os << (*n.value<bool>() ? "true" : "false");
    else if (n.is_table()) os << "a table";
    else if (n.is_array()) os << "an array";
    else os << "a date or time";
    return os.str();
}

// One table of the file, with the name used in messages ("[scoring.stages.tiled]").
class Section {
public:
    Section(const toml::table& t, std::string name, std::string source)
        : table_(t), name_(std::move(name)), source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& key, const std::string& what, const toml::node* got) const {
        std::string msg = source_ + ": " + name_ + " " + key + " " + what;
        if (got) msg += ", got " + show(*got);
        throw ConfigError(msg);
    }

    void only_keys(const std::vector<std::string>& known) const {
        for (auto&& [k, v] : table_) {
            const std::string key(k.str());
            if (std::find(known.begin(), known.end(), key) != known.end()) continue;
            std::string msg = source_ + ": " + name_ + " has an unknown key '" + key + "'";
            std::string best;
            size_t best_d = std::numeric_limits<size_t>::max();
            for (const std::string& cand : known)
                if (size_t d = edit_distance(key, cand); d < best_d) best_d = d, best = cand;
            constexpr size_t kTypoDistance = 3;  // a few wrong letters: probably a typo
            if (best_d <= kTypoDistance) msg += " (did you mean '" + best + "'?)";
            msg += "; the keys of " + name_ + " are:";
            for (const std::string& cand : known) msg += " " + cand;
            throw ConfigError(msg);
        }
    }

    const toml::node* get(const std::string& key) const { return table_.get(key); }

    std::optional<double> number(const std::string& key, double lo, double hi) const {
        const toml::node* n = get(key);
        if (!n) return std::nullopt;
        return number_of(*n, key, lo, hi);
    }

    double number_of(const toml::node& n, const std::string& key, double lo, double hi) const {
        std::optional<double> v;
        if (n.is_integer()) v = static_cast<double>(*n.value<int64_t>());
        else if (n.is_floating_point()) v = *n.value<double>();
        if (!v || !std::isfinite(*v) || *v < lo || *v > hi) fail(key, "must be a number between " + num(lo) + " and " + num(hi), &n);
        return *v;
    }

    std::optional<int> whole(const std::string& key, int lo, int hi) const {
        const toml::node* n = get(key);
        if (!n) return std::nullopt;
        if (!n->is_integer() || *n->value<int64_t>() < lo || *n->value<int64_t>() > hi)
            fail(key, "must be a whole number between " + std::to_string(lo) + " and " + std::to_string(hi), n);
        return static_cast<int>(*n->value<int64_t>());
    }

    std::optional<bool> boolean(const std::string& key) const {
        const toml::node* n = get(key);
        if (!n) return std::nullopt;
        if (!n->is_boolean()) fail(key, "must be true or false", n);
        return *n->value<bool>();
    }

    std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& allowed) const {
        const toml::node* n = get(key);
        if (!n) return std::nullopt;
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
        if (!n->is_string() || std::find(allowed.begin(), allowed.end(), *n->value<std::string>()) == allowed.end())
            fail(key, "must be one of " + list, n);
        return *n->value<std::string>();
    }

    Shape shape_of(const toml::node& n, const std::string& key) const {
        if (!n.is_string()) fail(key, "must be a shape like \"4096x4096x4096\"", &n);
        std::string err;
        auto s = parse_shape(*n.value<std::string>(), &err);
        if (!s) fail(key, "is not a shape: " + err, nullptr);
        return *s;
    }

    // `key = 12` or `key = { float = 12, double = 9 }`.
    void per_precision(const std::string& key, double lo, double hi, PerPrecision* out) const {
        const toml::node* n = get(key);
        if (!n) return;
        if (const toml::table* t = n->as_table()) {
            Section inner(*t, name_, source_);
            for (auto&& [k, v] : *t) {
                const std::string p(k.str());
                if (p != "float" && p != "double")
                    fail(key, "has an unknown precision '" + p + "' (use float and double)", nullptr);
                const double value = number_of(v, key + "." + p, lo, hi);
                (p == "float" ? out->f32 : out->f64) = value;
            }
            return;
        }
        if (!n->is_integer() && !n->is_floating_point())
            fail(key, "must be a number between " + num(lo) + " and " + num(hi) +
                          ", or a table like { float = 12, double = 9 }", n);
        out->f32 = out->f64 = number_of(*n, key, lo, hi);
    }

    const std::string& name() const { return name_; }
    const std::string& source() const { return source_; }

private:
    static std::string num(double v) {
        std::ostringstream os;
        os << v;
        return os.str();
    }
    const toml::table& table_;
    std::string name_, source_;
};

constexpr int kMaxRepetitionsLimit = 100000;
constexpr double kMaxSecondsLimit = 3600;
constexpr double kMaxPoints = 1000;
constexpr double kMaxWeight = 1000;
constexpr double kMaxTargetPct = 1000;   // a target may lie above the reference's own speed
constexpr double kMaxCallMsAtPeak = 1e6;
constexpr double kMaxIntervalMs = 1000;  // calls shorter than this share an interval: a second is plenty

void read_bench(const Section& s, BenchConfig& b) {
    s.only_keys({"warmup", "min_repetitions", "max_repetitions", "target_spread_pct", "max_seconds", "min_timed_ms", "min_interval_ms", "clear_l2",
                 "call_timeout_seconds", "shapes"});
    if (auto v = s.whole("warmup", 0, kMaxRepetitionsLimit)) b.warmup = *v;
    if (auto v = s.whole("min_repetitions", 1, kMaxRepetitionsLimit)) b.min_repetitions = *v;
    if (auto v = s.whole("max_repetitions", 1, kMaxRepetitionsLimit)) b.max_repetitions = *v;
    if (b.max_repetitions < b.min_repetitions)
        s.fail("max_repetitions", "must be at least min_repetitions (" + std::to_string(b.min_repetitions) + ")",
               s.get("max_repetitions"));
    if (auto v = s.number("target_spread_pct", 0, 100)) b.target_spread_pct = *v;
    if (auto v = s.number("max_seconds", 0, kMaxSecondsLimit)) b.max_seconds = *v;
    if (auto v = s.number("min_timed_ms", 0, kMaxSecondsLimit * 1e3)) b.min_timed_ms = *v;
    if (auto v = s.number("min_interval_ms", 0, kMaxIntervalMs)) b.min_interval_ms = *v;
    if (auto v = s.boolean("clear_l2")) b.clear_l2 = *v;
    if (auto v = s.number("call_timeout_seconds", 1, kMaxSecondsLimit)) b.call_timeout_seconds = *v;
    // An interval of short calls holds up to twice min_interval_ms of work, under one time limit.
    if (4 * b.min_interval_ms > 1e3 * b.call_timeout_seconds) {
        std::ostringstream os;
        os << "must be at most a quarter of call_timeout_seconds (" << b.call_timeout_seconds << " s = "
           << 1e3 * b.call_timeout_seconds << " ms): an interval of short calls holds up to twice it, and the time "
           << "limit applies to the interval as a whole";
        s.fail("min_interval_ms", os.str(), s.get("min_interval_ms"));
    }
    if (const toml::node* n = s.get("shapes")) {
        const toml::array* arr = n->as_array();
        if (!arr || arr->empty()) s.fail("shapes", "must be a non-empty list of shapes like [\"4096x4096x4096\"]", n);
        b.shapes.clear();
        for (size_t i = 0; i < arr->size(); ++i)
            b.shapes.push_back(s.shape_of(*arr->get(i), "shapes[" + std::to_string(i) + "]"));
    }
}

void read_stage(const Section& s, StageRubric& r) {
    if (s.get("target_pct_cublas"))
        s.fail("target_pct_cublas", "is no longer read: targets are a % of the reference solution's speed on the "
               "same GPU; write target_pct_reference (docs/scoring.md, \"Targets\")", nullptr);
    s.only_keys({"correctness_points", "performance_points", "target_pct_reference", "extra_credit"});
    s.per_precision("correctness_points", 0, kMaxPoints, &r.correctness_points);
    s.per_precision("performance_points", 0, kMaxPoints, &r.performance_points);
    s.per_precision("target_pct_reference", 0, kMaxTargetPct, &r.target_pct_reference);
    if (s.get("performance_points") && !s.get("target_pct_reference"))
        for (Precision p : {Precision::f32, Precision::f64})
            if (r.performance_points.get(p) > 0)
                s.fail("target_pct_reference", "is missing: performance points need a target (e.g. "
                       "target_pct_reference = 80, 80% of the reference solution's speed)", nullptr);
    if (auto v = s.boolean("extra_credit")) r.extra_credit = *v;
}

void read_scoring(const Section& s, ScoringConfig& sc, const std::vector<std::string>& rubric_keys) {
    s.only_keys({"interpolation", "shapes", "gradescope_visibility", "measure_reference", "max_call_ms_at_peak", "stages"});
    if (auto v = s.choice("interpolation", {"log", "linear"})) sc.interpolation = *v == "log" ? Interpolation::log : Interpolation::linear;
    if (auto v = s.choice("gradescope_visibility", {"visible", "hidden", "after_due_date", "after_published"}))
        sc.gradescope_visibility = *v;
    if (auto v = s.boolean("measure_reference")) sc.measure_reference = *v;
    if (auto v = s.number("max_call_ms_at_peak", 0, kMaxCallMsAtPeak)) sc.max_call_ms_at_peak = *v;
    if (const toml::node* n = s.get("shapes")) {
        const toml::array* arr = n->as_array();
        const std::string form = "must be a non-empty list of shapes: [[scoring.shapes]] tables with shape = "
                                 "\"4096x4096x4096\" and weight = 1, or plain strings";
        if (!arr || arr->empty()) s.fail("shapes", form, n);
        sc.shapes.clear();
        for (size_t i = 0; i < arr->size(); ++i) {
            const toml::node& item = *arr->get(i);
            const std::string key = "shapes[" + std::to_string(i) + "]";
            ScoringShape ws;
            if (const toml::table* t = item.as_table()) {
                Section inner(*t, s.name() + " " + key, s.source());
                inner.only_keys({"shape", "weight"});
                const toml::node* shape = inner.get("shape");
                if (!shape) inner.fail("shape", "is missing", nullptr);
                ws.shape = inner.shape_of(*shape, "shape");
                if (auto w = inner.number("weight", 0, kMaxWeight)) ws.weight = *w;
            } else if (item.is_string()) {
                ws.shape = s.shape_of(item, key);
            } else {
                s.fail(key, form, &item);
            }
            sc.shapes.push_back(ws);
        }
        double total = 0;
        for (const ScoringShape& ws : sc.shapes) total += ws.weight;
        if (!(total > 0)) s.fail("shapes", "must have at least one shape with a weight above 0", nullptr);
    }
    if (const toml::node* n = s.get("stages")) {
        const toml::table* t = n->as_table();
        if (!t) s.fail("stages", "must be a table of [scoring.stages.<stage>] tables", n);
        Section stages(*t, "[scoring.stages]", s.source());
        stages.only_keys(rubric_keys);
        for (auto&& [k, v] : *t) {
            const std::string key(k.str());
            const toml::table* st = v.as_table();
            if (!st) stages.fail(key, "must be a table ([scoring.stages." + key + "])", &v);
            read_stage(Section(*st, "[scoring.stages." + key + "]", s.source()), sc.stages[key]);
        }
    }
}

}  // namespace

CourseConfig default_config(const std::vector<std::string>&) {
    CourseConfig c;
    c.source = "defaults";
    c.bench.shapes = {must_parse(kDefaultBenchShape)};
    return c;
}

void require_rubric(const CourseConfig& c, const std::vector<std::string>& rubric_keys) {
    std::string missing;
    for (const std::string& key : rubric_keys)
        if (!c.scoring.stages.count(key)) missing += (missing.empty() ? "" : ", ") + std::string("[scoring.stages.") + key + "]";
    if (!missing.empty())
        throw ConfigError(c.source + ": grading needs the rubric of every stage; missing " + missing +
                          " (course.toml of the GEMM Lab repository has them; docs/scoring.md)");
    if (c.scoring.shapes.empty())
        throw ConfigError(c.source + ": grading needs at least one [[scoring.shapes]] (docs/scoring.md)");
}

CourseConfig parse_config(const std::string& text, const std::string& source,
                          const std::vector<std::string>& rubric_keys) {
    CourseConfig c = default_config(rubric_keys);
    c.source = source;
    toml::table root;
    try {
        root = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        std::ostringstream os;
        os << source << ":" << e.source().begin.line << ":" << e.source().begin.column
           << ": not valid TOML: " << e.description();
        throw ConfigError(os.str());
    }
    const Section top(root, "(top level)", source);
    for (const char* name : {"bench", "scoring"}) {
        const toml::node* n = top.get(name);
        if (!n) continue;
        if (!n->is_table()) top.fail(name, std::string("must be a table ([") + name + "])", n);
    }
    if (const toml::table* t = root["bench"].as_table()) read_bench(Section(*t, "[bench]", source), c.bench);
    if (const toml::table* t = root["scoring"].as_table())
        read_scoring(Section(*t, "[scoring]", source), c.scoring, rubric_keys);
    return c;
}

CourseConfig load_config(const std::string& path, const std::vector<std::string>& rubric_keys) {
    std::ifstream in(path);
    if (!in) {
        CourseConfig c = default_config(rubric_keys);
        c.notes.insert(c.notes.begin(), "no " + path + ": using the built-in defaults of [bench] and [scoring]");
        return c;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_config(text.str(), path, rubric_keys);
}

}  // namespace gemmlab
