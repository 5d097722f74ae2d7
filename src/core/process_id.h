// The calling process's id without a system call: capture records check it on every call (a
// forked DataLoader worker inherits the Dumper and must not write into the parent's files), and
// on virtual machines each getpid() is a costly trap. The cached value is refreshed in the child
// by a pthread_atfork handler, which every fork() through the C library (os.fork, multiprocessing)
// runs.
#ifndef NUMPROBE_CORE_PROCESS_ID_H_
#define NUMPROBE_CORE_PROCESS_ID_H_

#include <sys/types.h>

namespace numprobe::detail {

pid_t CurrentProcessId();

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_PROCESS_ID_H_
