// A compare result held for browsing: msprobe's table in compact columnar memory (a double or an
// interned text id per cell; texts of a column stored once in one arena), with server-side
// queries: filters (result levels, a name pattern, metric ranges, a tree node's rows), sorting by
// any column and paging. Sort orders and filtered views are computed once and cached, so paging
// through a million rows costs the page, not the table. A ResultStore is immutable after
// ResultStoreBuilder::Finish and safe to query from many threads at once; it owns all its memory.
#ifndef NUMPROBE_UI_RESULT_STORE_H_
#define NUMPROBE_UI_RESULT_STORE_H_

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "numprobe/result.h"
#include "numprobe/verdict.h"

namespace numprobe::ui {

// Allocates arrays of 2 MiB and more on 2 MiB boundaries and asks for transparent huge pages
// (madvise): a page of rows in a sorted order touches every column at random rows, and with 4 KiB
// pages nearly every such cell costs a TLB miss.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  explicit HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n);
  void deallocate(T* p, size_t n);
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};
template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

// The texts of one column, stored once each in one arena and addressed by dense ids. Texts are
// interned (equal texts share an id) while that pays: a column whose texts are mostly distinct
// (op names, file names) stops interning after its first 8192 texts and simply appends.
class TextPool {
 public:
  uint32_t Intern(std::string_view text);
  std::string_view Text(uint32_t id) const;
  uint32_t size() const { return static_cast<uint32_t>(offsets_.size()); }
  // Drops the lookup table used while interning (the texts stay).
  void Freeze();
  // Ranks of the ids in byte order of their texts (rank[id]; equal texts share a rank), computed
  // once.
  const std::vector<uint32_t>& SortedRanks() const;

 private:
  std::vector<char> arena_;
  std::vector<uint64_t> offsets_;    // start of text id; its end is the next start or arena size
  std::deque<std::string> pending_;  // stable storage for the lookup keys while interning
  std::unordered_map<std::string_view, uint32_t> ids_;
  uint64_t calls_ = 0;
  bool interning_ = true;
  uint32_t last_ = UINT32_MAX;  // the id Intern returned last
  // Behind a pointer so that the pool stays movable.
  mutable std::unique_ptr<std::once_flag> ranks_once_ = std::make_unique<std::once_flag>();
  mutable std::vector<uint32_t> ranks_;
};

// One cell as it is added or read: a finite number, or a text.
struct Cell {
  bool is_number = false;
  double number = 0;
  std::string_view text;

  static Cell Number(double v) { return {true, v, {}}; }
  static Cell Text(std::string_view t) { return {false, 0, t}; }
};

// A query over a store's rows. Column indexes refer to ResultStore::columns().
struct RowQuery {
  std::vector<Verdict> levels;  // rows of these results only (empty: all)
  std::string pattern;  // case-insensitive substring of the name; '*' and '?' make it a glob
  struct Range {
    int column = -1;
    std::optional<double> min;  // inclusive
    std::optional<double> max;  // inclusive
  };
  std::vector<Range> ranges;  // numeric cells inside every range (text cells never match)
  // Rows whose entry's tree position lies in [node_begin, node_end) (a subtree), when set.
  std::optional<std::pair<uint32_t, uint32_t>> node_span;
  std::optional<uint32_t> entry;  // rows of this entry only
  int sort_column = -1;           // -1: execution order
  bool descending = false;

  // A canonical text of the query, used as its cache key.
  std::string Key() const;
};

class ResultStore {
 public:
  struct Column {
    std::string name;
    HugeVector<double> numbers;     // per row; empty when the column holds only texts
    HugeVector<uint32_t> text_ids;  // per row, 1 + pool id; 0 = a number; empty: only numbers
    TextPool texts;

    bool is_text(uint32_t row) const { return !text_ids.empty() && text_ids[row] != 0; }
    Cell Get(uint32_t row) const;
  };

  uint32_t row_count() const { return row_count_; }
  const std::vector<Column>& columns() const { return columns_; }
  int ColumnIndex(std::string_view name) const;  // -1 when absent
  Cell Get(uint32_t row, int column) const { return columns_[column].Get(row); }

  // Per row: its result level and its entry (an index into entry_names()).
  Verdict level(uint32_t row) const { return levels_[row]; }
  uint32_t entry(uint32_t row) const { return entries_[row]; }
  const std::vector<std::string>& entry_names() const { return entry_names_; }
  // The first row of each entry (rows of an entry need not be contiguous in hand-made tables).
  uint32_t entry_first_row(uint32_t entry) const { return entry_first_row_[entry]; }
  const std::vector<uint32_t>& entry_rows(uint32_t entry) const { return entry_rows_[entry]; }
  // The tree position of each entry (set by the model tree; 0 until then).
  void SetEntryTreePositions(std::vector<uint32_t> positions);
  uint32_t entry_tree_position(uint32_t entry) const { return entry_positions_[entry]; }

  int name_column() const { return name_column_; }
  int64_t LevelCount(Verdict level) const { return level_counts_[static_cast<int>(level)]; }

  // Rows matching `query`, in its order. The returned view is shared with the cache.
  std::shared_ptr<const std::vector<uint32_t>> Select(const RowQuery& query) const;
  // Rows [offset, offset + limit) of the query's order, and the total matching.
  struct Page {
    uint64_t total = 0;
    std::vector<uint32_t> rows;
  };
  Page Query(const RowQuery& query, uint64_t offset, uint64_t limit) const;
  // The row whose name (the name column) equals `name`, if any (the first in execution order).
  std::optional<uint32_t> FindByName(std::string_view name) const;
  // Row order sorted by `column`: numbers first, by value, then texts, by bytes, each in the
  // given direction; ties in execution order. Computed once per column and direction.
  std::shared_ptr<const std::vector<uint32_t>> SortOrder(int column, bool descending) const;

 private:
  friend class ResultStoreBuilder;
  bool Matches(const RowQuery& query, uint32_t row, const std::string& lowered_pattern,
               bool glob) const;

  uint32_t row_count_ = 0;
  std::vector<Column> columns_;
  std::vector<Verdict> levels_;
  std::vector<uint32_t> entries_;
  std::vector<std::string> entry_names_;
  std::vector<uint32_t> entry_first_row_;
  std::vector<std::vector<uint32_t>> entry_rows_;
  std::vector<uint32_t> entry_positions_;
  int name_column_ = -1;
  int64_t level_counts_[5] = {0, 0, 0, 0, 0};

  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const std::vector<uint32_t>>> sort_cache_;
  // Filtered views, most recently used first.
  mutable std::list<std::pair<std::string, std::shared_ptr<const std::vector<uint32_t>>>> views_;
};

// Builds a store row by row. The column named "NPU Name" (or the first column) is the name
// column; "Result" gives each row's level.
class ResultStoreBuilder {
 public:
  explicit ResultStoreBuilder(std::vector<std::string> column_names);
  // Adds a row of cells (one per column; missing trailing cells are empty texts) belonging to
  // the entry named `entry_name`. kOutOfRange beyond 2^32 - 1 rows.
  Status AddRow(const std::vector<Cell>& cells, std::string_view entry_name);
  size_t column_count() const { return names_.size(); }
  std::unique_ptr<ResultStore> Finish();

 private:
  std::vector<std::string> names_;
  std::unique_ptr<ResultStore> store_;
  // Cells while building, in ordinary memory (the store's huge-page arrays are filled once, at
  // Finish, so no huge page is zeroed for capacity that growth leaves unused).
  struct Building {
    std::vector<double> numbers;
    std::vector<uint32_t> text_ids;
  };
  std::vector<Building> building_;
  std::unordered_map<std::string, uint32_t> entry_ids_;
  uint32_t last_entry_ = 0;  // rows of one entry usually come together
  int result_column_ = -1;
};

// Whether a row name is an input-side leaf (inputs, keyword arguments, parameters) rather than
// an output or a gradient.
bool IsInputRowName(std::string_view row_name, std::string_view entry_name);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_RESULT_STORE_H_
