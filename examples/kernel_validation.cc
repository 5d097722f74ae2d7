// Validating a hand-written kernel against a reference implementation with numprobe's capture API.
//
// The "kernel" is a fast fp32 LayerNorm + GELU written the way custom kernels often are
// (one-pass variance E[x^2] - E[x]^2, tanh-approximated GELU); the reference computes the same
// ops in double with a two-pass variance and the exact erf GELU. Both runs record their ops under
// the same msprobe names, so the two dump trees pair row by row:
//
//   kernel_validation OUT_DIR [NUMPROBE_BIN]
//   numprobe compare -tp OUT_DIR/kernel/step0 -gp OUT_DIR/reference/step0 -o OUT_DIR/compare
//
// The program checks its own dumps and, given the numprobe binary, runs the compare itself: it
// must find the divergence the one-pass variance introduces (exit code 1 = findings) and write
// its result files. It exits non-zero if anything failed.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "numprobe/dump.h"
#include "numprobe/dumper.h"

namespace {

constexpr int kRows = 64;
constexpr int kCols = 256;

void LayerNormKernel(const std::vector<float>& x, const std::vector<float>& gamma,
                     const std::vector<float>& beta, float eps, std::vector<float>* y) {
  for (int r = 0; r < kRows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * kCols];
    float sum = 0, sum_sq = 0;
    for (int c = 0; c < kCols; ++c) {
      sum += row[c];
      sum_sq += row[c] * row[c];
    }
    const float mean = sum / kCols;
    const float var = sum_sq / kCols - mean * mean;  // one pass: cancels badly for large means
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int c = 0; c < kCols; ++c) {
      (*y)[static_cast<size_t>(r) * kCols + static_cast<size_t>(c)] =
          (row[c] - mean) * inv * gamma[static_cast<size_t>(c)] + beta[static_cast<size_t>(c)];
    }
  }
}

void LayerNormReference(const std::vector<float>& x, const std::vector<float>& gamma,
                        const std::vector<float>& beta, float eps, std::vector<float>* y) {
  for (int r = 0; r < kRows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * kCols];
    double mean = 0;
    for (int c = 0; c < kCols; ++c) mean += row[c];
    mean /= kCols;
    double var = 0;
    for (int c = 0; c < kCols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= kCols;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int c = 0; c < kCols; ++c) {
      (*y)[static_cast<size_t>(r) * kCols + static_cast<size_t>(c)] = static_cast<float>(
          (row[c] - mean) * inv * gamma[static_cast<size_t>(c)] + beta[static_cast<size_t>(c)]);
    }
  }
}

void GeluKernel(const std::vector<float>& x, std::vector<float>* y) {
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    (*y)[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

void GeluReference(const std::vector<float>& x, std::vector<float>* y) {
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    (*y)[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
}

numprobe::DumpValue T(const std::vector<float>& data, std::vector<int64_t> shape) {
  numprobe::TensorArg arg;
  arg.view = numprobe::TensorView::Contiguous(data.data(), numprobe::DType::kF32, std::move(shape));
  return numprobe::DumpValue::Tensor(std::move(arg));
}

bool Check(const numprobe::Status& st, const char* what) {
  if (!st.ok()) std::fprintf(stderr, "kernel_validation: %s: %s\n", what, st.ToString().c_str());
  return st.ok();
}

// Runs the model once with `kernel` or the reference and dumps it under `dump_path`.
bool Run(const std::string& dump_path, bool kernel) {
  const std::string config_json = R"({"task": "tensor", "level": "L1", "dump_path": ")" +
                                  dump_path + R"(", "tensor": {"file_format": "npy"}})";
  auto config = numprobe::DumpConfig::Parse(config_json);
  if (!Check(config.error(), "config")) return false;
  numprobe::DumperOptions options;
  options.rank = 0;
  auto dumper = numprobe::Dumper::Open(*config, options);
  if (!Check(dumper.error(), "open")) return false;
  numprobe::Dumper& d = **dumper;

  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(kRows * kCols), gamma(kCols), beta(kCols), h(x.size()), y(x.size());
  for (float& v : x) v = 300.0f + dist(gen);  // a large offset exposes the one-pass variance
  for (float& v : gamma) v = 1.0f + 0.1f * dist(gen);
  for (float& v : beta) v = 0.1f * dist(gen);
  const float eps = 1e-5f;

  if (!Check(d.Start(), "start")) return false;
  const std::string ln = "Functional.layer_norm.0.forward";
  bool ok = Check(
      d.RecordForwardInputs(
          ln,
          numprobe::DumpValue::List(
              {T(x, {kRows, kCols}), numprobe::DumpValue::List({numprobe::DumpValue::Int(kCols)}),
               T(gamma, {kCols}), T(beta, {kCols}), numprobe::DumpValue::Float(eps)}),
          numprobe::DumpValue::Dict({})),
      "layer_norm inputs");
  (kernel ? LayerNormKernel : LayerNormReference)(x, gamma, beta, eps, &h);
  ok = ok && Check(d.RecordForwardOutputs(ln, numprobe::DumpValue::List({T(h, {kRows, kCols})})),
                   "layer_norm outputs");
  const std::string gelu = "Functional.gelu.0.forward";
  ok = ok && Check(d.RecordForwardInputs(gelu, numprobe::DumpValue::List({T(h, {kRows, kCols})}),
                                         numprobe::DumpValue::Dict({})),
                   "gelu inputs");
  (kernel ? GeluKernel : GeluReference)(h, &y);
  ok = ok && Check(d.RecordForwardOutputs(gelu, numprobe::DumpValue::List({T(y, {kRows, kCols})})),
                   "gelu outputs");
  ok = ok && Check(d.Stop(), "stop") && Check(d.Close(), "close");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: kernel_validation OUT_DIR [NUMPROBE_BIN]\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::error_code ec;
  std::filesystem::remove_all(out, ec);
  if (!Run((out / "kernel").string(), true) || !Run((out / "reference").string(), false)) return 1;
  // Both dumps must hold the two ops with their tensor files.
  for (const char* side : {"kernel", "reference"}) {
    const auto rank_dir = out / side / "step0" / "rank0";
    auto dump = numprobe::LoadDumpJson(rank_dir);
    if (!Check(dump.error(), "reading the dump back")) return 1;
    if (dump->text.find("Functional.gelu.0.forward") == std::string::npos ||
        !std::filesystem::exists(rank_dir / "dump_tensor_data" /
                                 "Functional.gelu.0.forward.output.0.npy")) {
      std::fprintf(stderr, "kernel_validation: %s dump is incomplete\n", side);
      return 1;
    }
  }
  if (argc == 3) {
    const std::string cmd = std::string("'") + argv[2] + "' compare -tp '" +
                            (out / "kernel" / "step0").string() + "' -gp '" +
                            (out / "reference" / "step0").string() + "' -o '" +
                            (out / "compare").string() + "'";
    const int rc = std::system(cmd.c_str());
    const int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    bool has_csv = false;
    for (const auto& f : std::filesystem::directory_iterator(out / "compare", ec)) {
      has_csv = has_csv || f.path().extension() == ".csv";
    }
    if (code != 1 || !has_csv) {
      std::fprintf(stderr,
                   "kernel_validation: compare exited %d (expected 1: divergence found)%s\n", code,
                   has_csv ? "" : ", no result csv");
      return 1;
    }
    std::printf("numprobe compare found the kernel's divergence; results in %s/compare\n",
                out.c_str());
    return 0;
  }
  std::printf(
      "wrote %s/kernel and %s/reference; compare them with:\n"
      "  numprobe compare -tp %s/kernel/step0 -gp %s/reference/step0 -o %s/compare\n",
      out.c_str(), out.c_str(), out.c_str(), out.c_str(), out.c_str());
  return 0;
}
