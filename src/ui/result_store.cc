#include "ui/result_store.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <sys/mman.h>

#include "core/ascii_case.h"

namespace numprobe::ui {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

template <typename T>
T* HugePageAllocator<T>::allocate(size_t n) {
  const size_t bytes = n * sizeof(T);
  if (bytes < kHugePage) return std::allocator<T>().allocate(n);
  void* p = ::operator new(bytes, static_cast<std::align_val_t>(kHugePage));
  ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without it, 4 KiB pages
  return static_cast<T*>(p);
}

template <typename T>
void HugePageAllocator<T>::deallocate(T* p, size_t n) {
  if (n * sizeof(T) < kHugePage) {
    std::allocator<T>().deallocate(p, n);
  } else {
    ::operator delete(p, static_cast<std::align_val_t>(kHugePage));
  }
}

template struct HugePageAllocator<uint32_t>;
template struct HugePageAllocator<double>;

namespace {

constexpr size_t kCachedViews = 16;

// Case-insensitive substring search; `needle` is already lower case.
bool ContainsLowered(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && detail::AsciiLower(hay[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

// Case-insensitive glob ('*' any run, '?' one character) over the whole of `text`; iterative with
// one backtrack point, so it runs in O(|text| * |pattern|) at worst.
bool GlobLowered(std::string_view text, std::string_view pattern) {
  size_t t = 0;
  size_t p = 0;
  size_t star = std::string_view::npos;
  size_t mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == detail::AsciiLower(text[t]))) {
      ++t;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

uint32_t TextPool::Intern(std::string_view text) {
  constexpr uint64_t kProbe = 8192;
  // Columns such as dtypes, shapes and results often repeat the previous row's text.
  if (last_ < offsets_.size() && Text(last_) == text) return last_;
  if (interning_) {
    auto it = ids_.find(text);
    if (it != ids_.end()) {
      ++calls_;
      return last_ = it->second;
    }
    if (++calls_ == kProbe && offsets_.size() * 2 > kProbe) {
      // Mostly distinct texts: deduplicating them costs more than it saves.
      interning_ = false;
      ids_ = {};
      pending_ = {};
    }
  }
  const auto id = static_cast<uint32_t>(offsets_.size());
  offsets_.push_back(arena_.size());
  arena_.insert(arena_.end(), text.begin(), text.end());
  if (interning_) {
    pending_.emplace_back(text);
    ids_.emplace(pending_.back(), id);
  }
  return last_ = id;
}

std::string_view TextPool::Text(uint32_t id) const {
  const uint64_t begin = offsets_[id];
  const uint64_t end = id + 1 < offsets_.size() ? offsets_[id + 1] : arena_.size();
  return {arena_.data() + begin, end - begin};
}

void TextPool::Freeze() {
  ids_ = {};
  pending_ = {};
  arena_.shrink_to_fit();
  offsets_.shrink_to_fit();
}

const std::vector<uint32_t>& TextPool::SortedRanks() const {
  std::call_once(*ranks_once_, [this] {
    std::vector<uint32_t> order(offsets_.size());
    std::iota(order.begin(), order.end(), 0U);
    std::sort(order.begin(), order.end(),
              [this](uint32_t a, uint32_t b) { return Text(a) < Text(b); });
    ranks_.assign(order.size(), 0);
    uint32_t rank = 0;
    for (uint32_t r = 0; r < order.size(); ++r) {
      if (r > 0 && Text(order[r]) != Text(order[r - 1])) rank = r;
      ranks_[order[r]] = rank;
    }
  });
  return ranks_;
}

std::string RowQuery::Key() const {
  std::string key = fmt::format("s{}{}|", sort_column, descending ? "d" : "a");
  for (const Verdict l : levels) key += fmt::format("l{}", static_cast<int>(l));
  key += "|p" + std::to_string(pattern.size()) + ":" + pattern;
  for (const Range& r : ranges) {
    key += fmt::format("|r{}:{}:{}", r.column, r.min ? fmt::format("{}", *r.min) : "",
                       r.max ? fmt::format("{}", *r.max) : "");
  }
  if (node_span) key += fmt::format("|n{}-{}", node_span->first, node_span->second);
  if (entry) key += fmt::format("|e{}", *entry);
  return key;
}

Cell ResultStore::Column::Get(uint32_t row) const {
  if (is_text(row)) return Cell::Text(texts.Text(text_ids[row] - 1));
  if (numbers.empty()) return Cell::Text("");
  return Cell::Number(numbers[row]);
}

int ResultStore::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

void ResultStore::SetEntryTreePositions(std::vector<uint32_t> positions) {
  entry_positions_ = std::move(positions);
  entry_positions_.resize(entry_names_.size(), 0);
}

std::shared_ptr<const std::vector<uint32_t>> ResultStore::SortOrder(int column,
                                                                    bool descending) const {
  const size_t slot = static_cast<size_t>(column) * 2 + (descending ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sort_cache_[slot]) return sort_cache_[slot];
  }
  // Sorted outside the lock; two threads racing on the same order both sort and one result is
  // kept (the orders are identical).
  const Column& c = columns_[column];
  auto order = std::make_shared<std::vector<uint32_t>>(row_count_);
  std::iota(order->begin(), order->end(), 0U);
  const std::vector<uint32_t>* ranks = c.text_ids.empty() ? nullptr : &c.texts.SortedRanks();
  std::stable_sort(order->begin(), order->end(), [&c, ranks, descending](uint32_t a, uint32_t b) {
    const bool ta = c.is_text(a);
    const bool tb = c.is_text(b);
    if (ta != tb) return tb;  // numbers before texts, in either direction
    if (!ta) {
      if (c.numbers.empty()) return false;
      return descending ? c.numbers[a] > c.numbers[b] : c.numbers[a] < c.numbers[b];
    }
    const uint32_t ra = (*ranks)[c.text_ids[a] - 1];
    const uint32_t rb = (*ranks)[c.text_ids[b] - 1];
    return descending ? ra > rb : ra < rb;
  });
  std::lock_guard<std::mutex> lock(mutex_);
  if (!sort_cache_[slot]) sort_cache_[slot] = std::move(order);
  return sort_cache_[slot];
}

bool ResultStore::Matches(const RowQuery& query, uint32_t row, const std::string& lowered_pattern,
                          bool glob) const {
  if (!query.levels.empty() &&
      std::find(query.levels.begin(), query.levels.end(), levels_[row]) == query.levels.end()) {
    return false;
  }
  if (query.entry && entries_[row] != *query.entry) return false;
  if (query.node_span) {
    const uint32_t pos = entry_positions_[entries_[row]];
    if (pos < query.node_span->first || pos >= query.node_span->second) return false;
  }
  for (const RowQuery::Range& r : query.ranges) {
    const Column& c = columns_[r.column];
    if (c.is_text(row) || c.numbers.empty()) return false;
    const double v = c.numbers[row];
    if (r.min && !(v >= *r.min)) return false;
    if (r.max && !(v <= *r.max)) return false;
  }
  if (!lowered_pattern.empty() && name_column_ >= 0) {
    const Cell name = columns_[name_column_].Get(row);
    const std::string number_text = name.is_number ? fmt::format("{}", name.number) : "";
    const std::string_view text = name.is_number ? std::string_view{number_text} : name.text;
    if (glob ? !GlobLowered(text, lowered_pattern) : !ContainsLowered(text, lowered_pattern)) {
      return false;
    }
  }
  return true;
}

std::shared_ptr<const std::vector<uint32_t>> ResultStore::Select(const RowQuery& query) const {
  const std::string key = query.Key();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = views_.begin(); it != views_.end(); ++it) {
      if (it->first == key) {
        views_.splice(views_.begin(), views_, it);
        return views_.front().second;
      }
    }
  }
  std::shared_ptr<const std::vector<uint32_t>> order;
  if (query.sort_column >= 0) order = SortOrder(query.sort_column, query.descending);
  const std::string lowered = detail::AsciiLowered(query.pattern);
  const bool glob = lowered.find_first_of("*?") != std::string::npos;
  const bool only_entry = query.entry.has_value() && query.levels.empty() && lowered.empty() &&
                          query.ranges.empty() && !query.node_span && !order;
  auto view = std::make_shared<std::vector<uint32_t>>();
  if (only_entry) {
    *view = entry_rows_[*query.entry];  // "the rows of this op", without a scan
  } else {
    for (uint32_t i = 0; i < row_count_; ++i) {
      const uint32_t row = order ? (*order)[i] : i;
      if (Matches(query, row, lowered, glob)) view->push_back(row);
    }
  }
  std::shared_ptr<const std::vector<uint32_t>> shared = std::move(view);
  std::lock_guard<std::mutex> lock(mutex_);
  views_.emplace_front(key, shared);
  if (views_.size() > kCachedViews) views_.pop_back();
  return shared;
}

ResultStore::Page ResultStore::Query(const RowQuery& query, uint64_t offset, uint64_t limit) const {
  Page page;
  const bool plain = query.levels.empty() && query.pattern.empty() && query.ranges.empty() &&
                     !query.node_span && !query.entry && query.sort_column < 0;
  if (plain) {
    // Execution order, unfiltered: no view needed.
    page.total = row_count_;
    for (uint64_t r = offset; r < row_count_ && r < offset + limit; ++r) {
      page.rows.push_back(static_cast<uint32_t>(r));
    }
    return page;
  }
  const auto view = Select(query);
  page.total = view->size();
  for (uint64_t r = offset; r < view->size() && r < offset + limit; ++r) {
    page.rows.push_back((*view)[r]);
  }
  return page;
}

std::optional<uint32_t> ResultStore::FindByName(std::string_view name) const {
  if (name_column_ < 0 || row_count_ == 0) return std::nullopt;
  const auto order = SortOrder(name_column_, false);
  const Column& c = columns_[name_column_];
  auto text_of = [&c](uint32_t row) {
    return c.is_text(row) ? c.Get(row).text : std::string_view();
  };
  // Texts sort after numbers: find the first text row, then binary search the texts.
  auto first_text = std::partition_point(order->begin(), order->end(),
                                         [&c](uint32_t row) { return !c.is_text(row); });
  auto it = std::lower_bound(first_text, order->end(), name,
                             [&](uint32_t row, std::string_view n) { return text_of(row) < n; });
  if (it != order->end() && text_of(*it) == name) return *it;
  return std::nullopt;
}

ResultStoreBuilder::ResultStoreBuilder(std::vector<std::string> column_names)
    : names_(std::move(column_names)),
      store_(std::make_unique<ResultStore>()),
      building_(names_.size()) {
  store_->columns_.resize(names_.size());
  for (size_t i = 0; i < names_.size(); ++i) {
    store_->columns_[i].name = names_[i];
    if (names_[i] == "NPU Name") store_->name_column_ = static_cast<int>(i);
    if (names_[i] == "Result") result_column_ = static_cast<int>(i);
  }
  if (store_->name_column_ < 0 && !names_.empty()) store_->name_column_ = 0;
}

Status ResultStoreBuilder::AddRow(const std::vector<Cell>& cells, std::string_view entry_name) {
  ResultStore& s = *store_;
  if (s.row_count_ == std::numeric_limits<uint32_t>::max()) {
    return Status::OutOfRange("a result of more than 4294967295 rows");
  }
  const uint32_t row = s.row_count_;
  for (size_t i = 0; i < s.columns_.size(); ++i) {
    Building& b = building_[i];
    const Cell cell = i < cells.size() ? cells[i] : Cell::Text("");
    // A column keeps numbers only once it has seen one, texts likewise; both arrays stay aligned
    // with the rows from then on.
    if (cell.is_number) {
      if (b.numbers.size() < row) b.numbers.resize(row, 0.0);
      b.numbers.push_back(cell.number);
      if (!b.text_ids.empty()) b.text_ids.push_back(0);
    } else {
      if (b.text_ids.size() < row) b.text_ids.resize(row, 0);
      b.text_ids.push_back(s.columns_[i].texts.Intern(cell.text) + 1);
      if (!b.numbers.empty()) b.numbers.push_back(0.0);
    }
  }
  Verdict level = Verdict::kNone;
  if (result_column_ >= 0 && result_column_ < static_cast<int>(cells.size()) &&
      !cells[result_column_].is_number) {
    level = EnumFromName<Verdict>(cells[result_column_].text).value_or(Verdict::kNone);
  }
  s.levels_.push_back(level);
  ++s.level_counts_[static_cast<int>(level)];
  uint32_t entry = last_entry_;
  if (s.entry_names_.empty() || s.entry_names_[last_entry_] != entry_name) {
    auto [it, inserted] = entry_ids_.try_emplace(std::string(entry_name),
                                                 static_cast<uint32_t>(s.entry_names_.size()));
    if (inserted) {
      s.entry_names_.emplace_back(entry_name);
      s.entry_first_row_.push_back(row);
      s.entry_rows_.emplace_back();
    }
    entry = last_entry_ = it->second;
  }
  s.entries_.push_back(entry);
  s.entry_rows_[entry].push_back(row);
  ++s.row_count_;
  return Status::Ok();
}

std::unique_ptr<ResultStore> ResultStoreBuilder::Finish() {
  ResultStore& s = *store_;
  for (size_t i = 0; i < s.columns_.size(); ++i) {
    ResultStore::Column& c = s.columns_[i];
    Building& b = building_[i];
    // A column that saw only texts keeps no numbers and vice versa; pad the late starters.
    if (!b.numbers.empty()) {
      b.numbers.resize(s.row_count_, 0.0);
      c.numbers.assign(b.numbers.begin(), b.numbers.end());
    }
    if (!b.text_ids.empty()) {
      b.text_ids.resize(s.row_count_, 0);
      c.text_ids.assign(b.text_ids.begin(), b.text_ids.end());
    }
    b = Building();
    c.texts.Freeze();
  }
  s.sort_cache_.assign(s.columns_.size() * 2, nullptr);
  s.entry_positions_.assign(s.entry_names_.size(), 0);
  entry_ids_ = {};
  auto out = std::move(store_);
  store_ = std::make_unique<ResultStore>();
  return out;
}

bool IsInputRowName(std::string_view row_name, std::string_view entry_name) {
  if (row_name.size() <= entry_name.size() + 1) return false;
  const std::string_view rest = row_name.substr(entry_name.size() + 1);
  return rest.starts_with("input") || rest.starts_with("kwargs") || rest.starts_with("parameters.");
}

}  // namespace numprobe::ui
