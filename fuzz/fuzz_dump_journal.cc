// Fuzz target for the capture journal's reader (msprobe/dump_journal.h). A rank folder that holds
// dump.json.journal and no dump.json (a run killed before its step ended) is read through the
// journal by compare, scan and inspect, whatever dump they are given: any bytes must give a dump
// or an error; never a crash, a hang or an out-of-bounds access. An accepted journal must give
// the same dump both ways it is read: the model compare builds from it (ReadDumpJson) and the
// dump.json text it rebuilds (LoadDumpJson, what inspect shows and a user may save), parsed
// again, hold the same entries and rows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string_view>

#include "numprobe/dump.h"

#include "testing/temp_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const numprobe::test::TempDir kFolder("numprobe_fuzz");  // removed at exit
  if (kFolder.path().empty()) std::abort();
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path journal =
      kFolder.Write(std::string(numprobe::kDumpJournalName), bytes);
  const std::filesystem::path& rank = kFolder.path();

  auto model = numprobe::ReadDumpJson(rank / "dump.json");
  auto text = numprobe::LoadDumpJson(rank);
  auto texts = numprobe::ReadDumpJournalText(journal);
  // One reader underneath: the three agree on whether the journal is readable.
  if (text.ok() != texts.ok()) std::abort();
  if (!text.ok()) {
    if (text.error().message().empty()) std::abort();  // every error says what is wrong
    return 0;
  }
  if (!text->from_journal || text->text != texts->dump) std::abort();
  // A readable journal may still hold entries that are no dump (the model refuses them, as it
  // refuses such a dump.json); when the model accepts them, the rebuilt text gives the same.
  auto reparsed =
      numprobe::ParseDumpJson(std::span<const char>(text->text.data(), text->text.size()));
  if (model.ok() != reparsed.ok()) std::abort();
  if (!model.ok()) return 0;
  if (!model->from_journal || model->entries.size() != reparsed->entries.size() ||
      model->rows.size() != reparsed->rows.size() || model->task != reparsed->task) {
    std::abort();
  }
  for (size_t e = 0; e < model->entries.size(); ++e) {
    if (model->entries[e].name != reparsed->entries[e].name ||
        model->entries[e].row_count != reparsed->entries[e].row_count) {
      std::abort();
    }
  }
  for (size_t r = 0; r < model->rows.size(); ++r) {
    if (model->rows[r].name != reparsed->rows[r].name ||
        model->rows[r].data_name != reparsed->rows[r].data_name) {
      std::abort();
    }
  }
  return 0;
}
