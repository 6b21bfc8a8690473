/*
 * mip/mipruntime.c - the MIP runtime: at exit, write the whole
 * __llvm_mipraw section (its header and every function's raw profile data,
 * from __start___llvm_mipraw to __stop___llvm_mipraw, which the linker
 * defines) to the file named by $MIP_RAW_FILE, or default.mipraw.
 * __mip_clock numbers the functions' first calls for the timestamps of the
 * MIP_COUNTS build.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern char __start___llvm_mipraw[], __stop___llvm_mipraw[];

unsigned int __mip_clock;

__attribute__((destructor)) static void mip_write_raw(void)
{
	const char *path = getenv("MIP_RAW_FILE");
	if (path == NULL || *path == '\0')
		path = "default.mipraw";
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		_exit(3);
	}
	const char *p = __start___llvm_mipraw;
	while (p < __stop___llvm_mipraw) {
		ssize_t n = write(fd, p, __stop___llvm_mipraw - p);
		if (n <= 0) {
			perror(path);
			_exit(3);
		}
		p += n;
	}
	if (close(fd) != 0) {
		perror(path);
		_exit(3);
	}
}
