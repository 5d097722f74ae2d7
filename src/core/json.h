// The one JSON reader of numprobe: every JSON file the project reads goes through the functions
// here (RapidJSON underneath; nothing else includes its reader or Document).
//
//   ParseJson        a whole document into a JsonValue (configs, maps, result files, journal lines)
//   StreamJson       a large object member by member, each member a JsonValue (stack.json,
//                    construct.json: only one member is held at a time); StreamJsonTape
//                    (json_tape.h) the same with each member a flat tape (dump.json)
//   ParseJsonEvents  SAX events for readers that check a schema as it arrives or build their own
//                    model (the safetensors header); StreamJsonEvents and ParseJsonFileEvents the
//                    same for large inputs in memory or in a file (the compare JSON twin)
//
// Every entry point refuses nesting deeper than JsonReadOptions::max_depth (kOutOfRange, "JSON
// nested deeper than N levels at byte B") before anything recurses, so no input can exhaust the
// stack, and applies the caller's policy for the bare tokens NaN, Infinity and -Infinity, which
// Python's json writes and standard JSON lacks. Numbers are read as Python's json reads them: a
// literal with a fraction, an exponent, NaN or Infinity is a float (correctly rounded), any other
// an integer, kept as its digits when it does not fit 64 bits. A key repeated in one object keeps
// its first position and takes the last value (Python's dict). Malformed input is kCorrupt
// "malformed JSON at byte N: <reason>".
#ifndef NUMPROBE_CORE_JSON_H_
#define NUMPROBE_CORE_JSON_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

// msprobe's own recursion limit for the values it dumps; the default depth limit.
inline constexpr int kMaxJsonDepth = 400;

// What the reader does with the bare tokens NaN, Infinity and -Infinity.
enum class JsonNonFinite : uint8_t {
  kAccept,  // Python's json: read as the float NaN / +inf / -inf (msprobe's files, numprobe's own)
  kReject,  // standard JSON: a parse error
};

// Where and why RapidJSON found the input malformed.
struct JsonSyntaxError {
  uint64_t offset = 0;
  std::string reason;  // "Missing a comma or '}' after an object member."
};

struct JsonReadOptions {
  // Containers (objects and arrays) nested deeper than this are refused; the root is level 1.
  int max_depth = kMaxJsonDepth;
  JsonNonFinite non_finite = JsonNonFinite::kAccept;
  // When set, malformed input also fills it, for readers that word the error themselves.
  JsonSyntaxError* syntax_error = nullptr;
};

// The two policies in use. Python's json (msprobe's files, the journal, numprobe's own results and
// configs written by Python): the bare tokens are read. Standard JSON (RFC 8259: maps, the
// safetensors header, the config-check probe's output): they are malformed.
inline constexpr JsonReadOptions kPythonJson = {.max_depth = kMaxJsonDepth,
                                                .non_finite = JsonNonFinite::kAccept};
inline constexpr JsonReadOptions kStandardJson = {.max_depth = kMaxJsonDepth,
                                                  .non_finite = JsonNonFinite::kReject};

// A number literal read as Python's json reads it.
struct JsonNumber {
  enum class Kind : uint8_t { kInt, kBigInt, kFloat };
  Kind kind = Kind::kInt;
  int64_t integer = 0;  // kInt
  double number = 0;    // kFloat; kInt and kBigInt converted (correctly rounded)
};
// `literal` as RapidJSON validated it ("12", "-0.5e3", "NaN", "-Infinity").
JsonNumber ReadJsonNumber(std::string_view literal);

// Whole documents.
Result<JsonValue> ParseJson(std::string_view text, const JsonReadOptions& options = {});

// SAX events. A handler returns false to stop; Fail() records why (passed on to the caller).
class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual bool Null() = 0;
  virtual bool Bool(bool value) = 0;
  virtual bool Number(std::string_view literal) = 0;  // see ReadJsonNumber
  virtual bool String(std::string_view value) = 0;
  virtual bool Key(std::string_view key) = 0;
  virtual bool StartObject() = 0;
  virtual bool EndObject() = 0;
  virtual bool StartArray() = 0;
  virtual bool EndArray() = 0;

  const Status& status() const { return status_; }

 protected:
  bool Fail(Status status) {
    status_ = std::move(status);
    return false;
  }
  // The byte offset the reader has reached in the input.
  uint64_t Offset() const { return offset_ ? offset_(offset_context_) : 0; }

 private:
  friend class JsonEventSource;
  Status status_;
  uint64_t (*offset_)(void*) = nullptr;
  void* offset_context_ = nullptr;
};

// Parses `text`, reporting to `events`. A handler's failure is returned as it was given.
Status ParseJsonEvents(std::string_view text, JsonEvents& events,
                       const JsonReadOptions& options = {});
// The same for large inputs: `bytes` is read where it lies (a mapped file), not copied.
Status StreamJsonEvents(std::span<const char> bytes, JsonEvents& events,
                        const JsonReadOptions& options = {});
// The same, reading the file at `path` in 64 KiB pieces (memory independent of its size).
Status ParseJsonFileEvents(const std::filesystem::path& path, JsonEvents& events,
                           const JsonReadOptions& options = {});

// A large object streamed member by member.
struct JsonStreamSpec {
  // Keys leading from the root object to the object whose members are streamed one at a time
  // ({"data"} for dump.json; empty = the root's own members).
  std::vector<std::string> stream_path;
  // Set to true when the streamed object was found (may be null).
  bool* reached_stream_object = nullptr;
  // Called for each streamed member, in file order; `offset` is where its value starts.
  std::function<Status(std::string_view key, JsonValue&& value, uint64_t offset)> on_member;
  // Called for root members that are not on the stream path (may be empty).
  std::function<Status(std::string_view key, JsonValue&& value)> on_root_member;
};

// Parses `bytes` (a root object). The depth limit counts from the streamed member's value. A root
// that is not an object: kCorrupt. Errors returned by the callbacks are passed through.
Status StreamJson(std::span<const char> bytes, const JsonStreamSpec& spec,
                  const JsonReadOptions& options = {});
// The same, reading the regular file at `path` in 64 KiB pieces: memory independent of the file's
// size (a mapped file's pages would stay resident until the parse ends). Errors from opening the
// file start with its path; parse errors are as StreamJson's.
Status StreamJsonFile(const std::filesystem::path& path, const JsonStreamSpec& spec,
                      const JsonReadOptions& options = {});

}  // namespace numprobe

#endif  // NUMPROBE_CORE_JSON_H_
