// The physical reference of the large-dump benchmark (bench/large_stats_bench.py): one RapidJSON
// SAX pass over each file named on the command line, as numprobe's JSON reading would need at
// least (full-precision numbers, NaN/Infinity accepted), with a handler that does nothing. Reads
// each file whole into memory first, as compare does; prints nothing, exits 1 on a parse error.
#include <cstdio>
#include <fstream>
#include <string>

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary | std::ios::ate);
    std::string bytes(static_cast<size_t>(in.tellg()), '\0');
    in.seekg(0);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    rapidjson::MemoryStream stream(bytes.data(), bytes.size());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    constexpr unsigned kFlags = rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag;
    if (reader.Parse<kFlags>(stream, handler).IsError()) {
      std::fprintf(stderr, "%s: not JSON\n", argv[i]);
      return 1;
    }
  }
  return 0;
}
