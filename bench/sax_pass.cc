// The physical reference of the large-dump benchmark (bench/large_stats_bench.py): one RapidJSON
// SAX pass over each file named on the command line, as numprobe's JSON reading would need at
// least (full-precision numbers, NaN/Infinity accepted), with a handler that does nothing. Reads
// each file in 1 MiB pieces through one reused buffer, as compare's and scan's readers do: a
// reference that read a file whole into a fresh buffer would also time a page fault per 4 KiB,
// which on this VM tripled it (7.0-7.6 s against 2.2-2.5 s for the 1.2 GiB pair) and varied from
// day to day. Prints nothing; exits 1 on a file it cannot open or parse.
#include <cstdio>
#include <vector>

#include <rapidjson/filereadstream.h>
#include <rapidjson/reader.h>

int main(int argc, char** argv) {
  std::vector<char> buffer(size_t{1} << 20);
  for (int i = 1; i < argc; ++i) {
    std::FILE* file = std::fopen(argv[i], "rb");
    if (file == nullptr) {
      std::fprintf(stderr, "%s: cannot open\n", argv[i]);
      return 1;
    }
    rapidjson::FileReadStream stream(file, buffer.data(), buffer.size());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    constexpr unsigned kFlags = rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag;
    const bool failed = reader.Parse<kFlags>(stream, handler).IsError();
    std::fclose(file);
    if (failed) {
      std::fprintf(stderr, "%s: not JSON\n", argv[i]);
      return 1;
    }
  }
  return 0;
}
