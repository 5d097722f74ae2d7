#include "numprobe/app/inspect.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/buffer.h"
#include "numprobe/memory_limit.h"

#include "core/json_writer.h"
#include "core/utf8.h"
#include "msprobe/data_file.h"
#include "msprobe/dump_journal.h"
#include "msprobe/packed_tensors.h"

namespace numprobe {
namespace {

namespace fs = std::filesystem;

bool IsDumpFileName(const fs::path& p) {
  return p.filename() == "dump.json" || p.filename() == std::string(kDumpJournalName);
}

// `json` is a dump.json (or debug.json, or any file msprobe's compare would take as one); the
// journal's name stands for its folder's dump.json (read from the journal when that is newer).
// A dump is named by its folder, as the user thinks of it.
Result<InspectedDump> InspectDump(const fs::path& json) {
  InspectedDump out;
  const bool journal = json.filename() == std::string(kDumpJournalName);
  out.path =
      journal || json.filename() == "dump.json" ? json.parent_path().string() : json.string();
  if (out.path.empty()) out.path = ".";
  NUMPROBE_ASSIGN_OR_RETURN(out.file,
                            ReadDumpJson(journal ? json.parent_path() / "dump.json" : json));
  for (const DumpRow& row : out.file.rows) {
    if (row.is_tensor) ++out.tensor_rows;
  }
  if (!out.file.from_journal) {
    out.source = "dump.json";
  } else {
    out.source = out.file.journal_truncated_tail
                     ? std::string(kDumpJournalName) + " (last record cut short)"
                     : std::string(kDumpJournalName);
  }
  return out;
}

// Large deflated storages are streamed (read_options.stream_deflated_over): their statistics
// are computed pass by pass, without the inflated bytes in memory. `packed`: the path is an entry
// of a dump's packed container, listed as the file it stands for.
Result<InspectedFile> InspectOne(const fs::path& path, const ReadOptions& read_options,
                                 const detail::DataFileRef* packed = nullptr) {
  InspectedFile out;
  out.path = path.string();
  if (packed != nullptr) {
    NUMPROBE_ASSIGN_OR_RETURN(out.file, detail::ReadDataFile(*packed, read_options));
  } else {
    NUMPROBE_ASSIGN_OR_RETURN(out.file, ReadTensorFile(path, read_options));
  }
  out.stats.reserve(out.file.tensors.size());
  for (const NamedTensor& t : out.file.tensors) {
    auto stats =
        ComputeTensorStats(t.tensor, {}, read_options.max_inflated_bytes, &out.file.warnings);
    if (!stats) return stats.error().WithContext(path.string() + ": tensor '" + t.name + "'");
    out.stats.push_back(*stats);
  }
  return out;
}

// Files of a folder, recursively, sorted by path so that output is stable. Symlinks are skipped:
// inspect reads only what it was given.
std::vector<fs::path> ListFiles(const fs::path& root, std::vector<std::string>* skipped) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_symlink()) {
      skipped->push_back(it->path().string() + ": symbolic link skipped");
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Detection sees the whole file (a memory map, read only where looked at): a checkpoint without
// its extension is recognised by a trial parse of its first record. A file that cannot be mapped
// is judged by its extension alone, and reading it reports the error.
bool LooksLikeTensorFile(const fs::path& path) {
  const auto buffer = Buffer::MapFile(path);
  const std::span<const std::byte> bytes =
      buffer ? (*buffer)->bytes() : std::span<const std::byte>();
  return DetectFormat(bytes, path) != FileFormat::kUnknown;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string Number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

// Untrusted metadata text made safe for one line of a terminal: cut after `max_chars` characters
// ("..." marks the cut), control characters (C0, DEL, C1) and bytes that are not valid UTF-8
// written as \xNN, other characters kept as they are. Written by hand: fmt's "{:?}" quotes and
// escapes but does not cut, and a cut must not split a UTF-8 sequence.
std::string DisplayText(std::string_view text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++chars) {
    if (chars == max_chars) return out + "...";
    const detail::Utf8Char c = detail::DecodeUtf8(text, i);  // RFC 3629
    // A control character is written as \xNN per byte; an ill-formed byte alone, as one
    // character.
    const size_t len = c.valid ? c.length : 1;
    if (!c.valid || c.code < 0x20 || (c.code >= 0x7F && c.code <= 0x9F)) {
      for (size_t k = 0; k < len; ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
      }
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

void AppendDumpText(const InspectedDump& d, std::string* out) {
  *out += fmt::format(
      "{}: {} dump, task {}, level {}: {} entries, {} rows ({} tensors), read from {}\n", d.path,
      d.file.framework.empty() ? "msprobe" : d.file.framework,
      d.file.task.empty() ? "?" : d.file.task, d.file.level.empty() ? "?" : d.file.level,
      d.file.entries.size(), d.file.rows.size(), d.tensor_rows, d.source);
}

void AppendFileText(const InspectedFile& f, std::string* out) {
  *out += fmt::format("{}: {}, {} tensor{}\n", f.path, EnumName(f.file.format),
                      f.file.tensors.size(), f.file.tensors.size() == 1 ? "" : "s");
  // File metadata (safetensors __metadata__, ckpt str values, torch.save format), one line per
  // key, in file order.
  constexpr size_t kMaxShownChars = 80;
  for (const auto& [key, value] : f.file.metadata) {
    *out += fmt::format("  {}: {}\n", DisplayText(key, kMaxShownChars),
                        DisplayText(value, kMaxShownChars));
  }
  if (f.file.tensors.empty()) return;
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {"name", "dtype", "shape", "max", "min", "mean", "norm", "nan", "+inf", "-inf", "zeros"});
  for (size_t i = 0; i < f.file.tensors.size(); ++i) {
    const NamedTensor& t = f.file.tensors[i];
    const TensorStats& s = f.stats[i];
    std::string name = t.name.empty() ? "(array)" : t.name;
    if (!t.device.empty()) name += " @" + t.device;
    rows.push_back({name, std::string(Name(t.tensor.dtype())), ShapeText(t.tensor.shape()),
                    s.has_minmax ? Number(s.max) : "-", s.has_minmax ? Number(s.min) : "-",
                    s.has_mean_norm ? Number(s.mean) : "-", s.has_mean_norm ? Number(s.norm) : "-",
                    std::to_string(s.nan_count), std::to_string(s.pos_inf_count),
                    std::to_string(s.neg_inf_count), std::to_string(s.zero_count)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool numeric = c >= 3;
      line += ' ';
      line += numeric ? fmt::format("{:>{}}", row[c], width[c])
                      : fmt::format("{:<{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    *out += line;
    *out += '\n';
  }
}

using Writer = JsonWriter<rapidjson::StringBuffer>;

// Non-finite numbers are written as the strings "NaN", "Infinity", "-Infinity" so that the output
// stays standard JSON (docs/inspect-json.md).
void WriteNumber(Writer& w, double v) { w.Double(v); }

void WriteJsonStats(Writer& w, const TensorStats& s) {
  w.StartObject();
  w.Key("count");
  w.Int64(s.count);
  w.Key("max");
  s.has_minmax ? WriteNumber(w, s.max) : static_cast<void>(w.Null());
  w.Key("min");
  s.has_minmax ? WriteNumber(w, s.min) : static_cast<void>(w.Null());
  w.Key("mean");
  s.has_mean_norm ? WriteNumber(w, s.mean) : static_cast<void>(w.Null());
  w.Key("norm");
  s.has_mean_norm ? WriteNumber(w, s.norm) : static_cast<void>(w.Null());
  w.Key("nan_count");
  w.Int64(s.nan_count);
  w.Key("pos_inf_count");
  w.Int64(s.pos_inf_count);
  w.Key("neg_inf_count");
  w.Int64(s.neg_inf_count);
  w.Key("zero_count");
  w.Int64(s.zero_count);
  w.Key("max_abs");
  WriteNumber(w, s.max_abs);
  w.Key("min_nonzero_abs");
  WriteNumber(w, s.min_nonzero_abs);
  w.EndObject();
}

void WriteJsonFile(Writer& w, const InspectedFile& f) {
  w.StartObject();
  w.Key("path");
  w.String(f.path.c_str());
  w.Key("format");
  w.String(std::string(EnumName(f.file.format)).c_str());
  w.Key("metadata");
  w.StartObject();
  for (const auto& [k, v] : f.file.metadata) {
    w.Key(k);
    w.String(v);
  }
  w.EndObject();
  w.Key("warnings");
  w.StartArray();
  for (const auto& warning : f.file.warnings) w.String(warning.c_str());
  w.EndArray();
  w.Key("tensors");
  w.StartArray();
  for (size_t i = 0; i < f.file.tensors.size(); ++i) {
    const NamedTensor& t = f.file.tensors[i];
    w.StartObject();
    w.Key("name");
    w.String(t.name);
    w.Key("dtype");
    w.String(std::string(Name(t.tensor.dtype())).c_str());
    w.Key("shape");
    w.StartArray();
    for (int64_t d : t.tensor.shape()) w.Int64(d);
    w.EndArray();
    w.Key("device");
    w.String(t.device.c_str());
    w.Key("stats");
    WriteJsonStats(w, f.stats[i]);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void WriteJsonDump(Writer& w, const InspectedDump& d) {
  w.StartObject();
  w.Key("path");
  w.String(d.path.c_str());
  for (const auto& [key, value] :
       {std::pair{"framework", &d.file.framework}, std::pair{"task", &d.file.task},
        std::pair{"level", &d.file.level}}) {
    w.Key(key);
    w.String(value->c_str());
  }
  w.Key("entries");
  w.Uint64(d.file.entries.size());
  w.Key("rows");
  w.Uint64(d.file.rows.size());
  w.Key("tensor_rows");
  w.Uint64(d.tensor_rows);
  w.Key("from_journal");
  w.Bool(d.file.from_journal);
  w.Key("journal_truncated_tail");
  w.Bool(d.file.journal_truncated_tail);
  w.EndObject();
}

}  // namespace

Result<InspectReport> Inspect(const fs::path& path, const InspectOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path.string() + ": no such file");
  InspectReport report;
  report.path = path.string();
  report.folder = fs::is_directory(path, ec);
  ReadOptions read_options;
  read_options.inert_pickle = options.inert_pickle;
  read_options.max_inflated_bytes = EffectiveMaxMemory(options.max_memory);
  read_options.stream_deflated_over = kStreamDeflatedOver;
  auto warn = [&report](std::string text) { report.messages.push_back({std::move(text), {}}); };
  auto fail = [&report](Status error, bool inert_would_read = false) {
    report.messages.push_back({"", std::move(error), inert_would_read});
    ++report.failed;
  };

  std::vector<fs::path> files;
  std::vector<fs::path> dump_files;  // dump.json (or journal) files, one per folder
  // The packed layout: each entry of a container is listed as the data file it stands for.
  std::map<fs::path, detail::DataFileRef> packed;
  if (report.folder) {
    std::vector<std::string> skipped;
    std::vector<fs::path> listed = ListFiles(path, &skipped);
    std::set<fs::path> packed_dirs;
    for (const fs::path& p : listed) {
      if (p.filename() == detail::kPackedIndexName) packed_dirs.insert(p.parent_path());
    }
    for (const fs::path& dir : packed_dirs) {
      auto index = detail::ReadPackedIndex(dir);
      if (!index) {
        ++report.candidates;
        fail(index.error());
        continue;
      }
      if ((*index)->torn_tail) {
        warn((dir / detail::kPackedIndexName).string() +
             ": the last line is cut short (a run killed while writing it); ignored");
      }
      for (size_t i = 0; i < (*index)->entries.size(); ++i) {
        const detail::PackedEntry& e = (*index)->entries[i];
        if ((*index)->by_name.at(e.name) != i) continue;  // rewritten later under the same name
        detail::DataFileRef ref;
        ref.path = dir / e.name;
        ref.packed = *index;
        ref.entry = i;
        ref.bytes = e.end - e.begin;
        if (!fs::exists(ref.path, ec)) packed.emplace(ref.path, std::move(ref));
      }
    }
    for (const auto& [p, ref] : packed) listed.push_back(p);
    std::sort(listed.begin(), listed.end());
    for (const fs::path& p : listed) {
      if (packed.count(p) != 0) {
        files.push_back(p);
        continue;
      }
      if (packed_dirs.count(p.parent_path()) != 0 &&
          (p.filename() == detail::kPackedIndexName || p.filename() == detail::kPackedDataName)) {
        continue;  // the container itself, listed entry by entry
      }
      if (IsDumpFileName(p)) {
        if (dump_files.empty() || dump_files.back().parent_path() != p.parent_path()) {
          dump_files.push_back(p);
        }
      } else if (LooksLikeTensorFile(p)) {
        files.push_back(p);
      }
    }
    for (std::string& s : skipped) warn(std::move(s));
  } else if (IsDumpFileName(path) || path.extension() == ".json") {
    dump_files.push_back(path);  // dump.json, debug.json, or a dump.json under another name
  } else {
    files.push_back(path);
  }
  report.candidates += files.size() + dump_files.size();

  for (const fs::path& p : dump_files) {
    auto dump = InspectDump(p);
    if (!dump) {
      fail(dump.error());
      continue;
    }
    if (dump->file.from_journal) {
      warn(dump->path + ": dump.json is missing or older than " + std::string(kDumpJournalName) +
           " (the run did not stop cleanly, or is still writing this step); read " + dump->source);
    }
    report.dumps.push_back(std::move(*dump));
  }
  for (const fs::path& p : files) {
    const auto ref = packed.find(p);
    auto file = InspectOne(p, read_options, ref == packed.end() ? nullptr : &ref->second);
    if (!file) {
      // Said so the caller can point to the inert mode; only a strict refusal is read again.
      bool inert_would_read = false;
      if (!read_options.inert_pickle && file.error().code() == ErrorCode::kRejected) {
        ReadOptions inert = read_options;
        inert.inert_pickle = true;
        inert_would_read = ReadTensorFile(p, inert).ok();
      }
      fail(file.error(), inert_would_read);
      continue;
    }
    for (const auto& w : file->file.warnings) warn(p.string() + ": " + w);
    report.files.push_back(std::move(*file));
  }
  return report;
}

std::string InspectText(const InspectReport& report) {
  std::string out;
  if (report.files.empty() && report.dumps.empty()) {
    out += report.path + ": no tensor files or dumps found\n";
  }
  for (const InspectedDump& d : report.dumps) AppendDumpText(d, &out);
  for (const InspectedFile& f : report.files) AppendFileText(f, &out);
  return out;
}

std::string InspectJson(const InspectReport& report) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer, JsonFileKind::kResult);
  w.StartObject();
  w.Key("numprobe_inspect");
  w.Int(1);
  w.Key("files");
  w.StartArray();
  for (const InspectedFile& f : report.files) WriteJsonFile(w, f);
  w.EndArray();
  w.Key("dumps");
  w.StartArray();
  for (const InspectedDump& d : report.dumps) WriteJsonDump(w, d);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace numprobe
