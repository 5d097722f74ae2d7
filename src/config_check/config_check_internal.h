// Pieces of config-check shared by its source files: canonical values, name classes, hashing,
// the Python probe and running a child process.
#ifndef NUMPROBE_CONFIG_CHECK_CONFIG_CHECK_INTERNAL_H_
#define NUMPROBE_CONFIG_CHECK_CONFIG_CHECK_INTERNAL_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/app/config_check.h"
#include "numprobe/json_value.h"

namespace numprobe::detail {

// "1e-3" and "0.001" -> "0.001"; "+007" -> "7"; nullopt when `text` is not a plain decimal number.
std::optional<std::string> CanonicalNumber(std::string_view text);
std::string CanonicalDouble(double v);
// A JSON integer beyond 64 bits signed (JsonValue::Kind::kBigInt) as canonical text.
std::string CanonicalBigInt(const JsonValue& v);

// Environment variables that set seeds or determinism (recorded under "random").
bool IsDeterminismEnvName(std::string_view name);
// Environment variables known to change numerics (a difference is an error).
bool IsNumericsEnvName(std::string_view name);
// Session-specific environment variables (HOSTNAME, PWD, SSH_*...): differences are ignored.
bool IsSessionEnvName(std::string_view name);
// Libraries whose version difference is an error (torch, numpy, transformers, ...).
bool IsKeyLibrary(std::string_view name);
// The libraries every snapshot records, "not installed" when absent.
const std::vector<std::string>& KeyLibraries();
// Hyperparameter names that mean a seed.
bool IsSeedName(std::string_view dotted_name);
// msprobe's hyperparameter aliases: the canonical name of the last dotted part ("lr" ->
// "learning_rate"), lower case with '-' read as '_'.
std::string CanonicalHyperparameterName(std::string_view dotted_name);

// The whole file at `path`: kNotFound, kIoError, or kOutOfRange past `max_bytes` (the message
// calls the file `what`).
Result<std::string> ReadCappedFile(const std::filesystem::path& path, uint64_t max_bytes,
                                   std::string_view what);

// SHA-256 of bytes as 64 hex digits ("" in a build without OpenSSL).
std::string Sha256Hex(std::string_view bytes);

// Runs argv (argv[0] found on PATH when it has no slash) with stdin closed, and returns what it
// wrote to stdout. kNotFound when it cannot be started; kInternal-free errors: kIoError for a
// non-zero exit (the message ends with the last line of stderr), kOutOfRange past `timeout_s`
// seconds or `max_output` bytes (the child is killed).
Result<std::string> RunAndCapture(const std::vector<std::string>& argv, int timeout_s,
                                  size_t max_output);

// The script the snapshot's interpreter runs: prints {"pip": {...}, "random": {...},
// "packages": {...}, "errors": [...]} as JSON.
std::string_view PythonProbeScript();

}  // namespace numprobe::detail

#endif  // NUMPROBE_CONFIG_CHECK_CONFIG_CHECK_INTERNAL_H_
