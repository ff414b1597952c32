/* Network input (POSIX): a socket option of the readers of network sources. */
#include <errno.h>
#include <sys/socket.h>

#include "hashq.h"

int hq_set_recv_lowat(int fd, int bytes) {
  return setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) == 0
             ? 0
             : -errno;
}
