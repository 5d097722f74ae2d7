// The stack frame a user recognises as their own line: the innermost frame outside the
// frameworks (torch, MindSpore), installed packages, Python's standard library and numprobe's
// capture package.
#ifndef NUMPROBE_COMPARE_USER_FRAME_H_
#define NUMPROBE_COMPARE_USER_FRAME_H_

#include <string>
#include <string_view>
#include <vector>

namespace numprobe::detail {

// True when a stack.json line ("File /path/x.py, line 9, in f, \n source") is in library code.
bool IsLibraryFrame(std::string_view frame);

// The first frame of `stack` (innermost first, as stack.json holds it) outside library code, on
// one line (its newline replaced by a space); the innermost frame when every frame is library
// code; "" for an empty stack.
std::string UserFrame(const std::vector<std::string>& stack);

// A frame as "file.py:LINE" (the file's name without its folder); the frame itself when it has
// another form.
std::string ShortFrame(std::string_view frame);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_USER_FRAME_H_
