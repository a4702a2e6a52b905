// SPDX-License-Identifier: MIT
/* /bin/segv: writes where nothing is mapped; the kernel kills it with SIGSEGV. */
#include <libc.h>

int main(int argc, char **argv)
{
	*(volatile int *)0x30000000UL = 42;	/* in the mmap area, outside any VMA */
	return 0;
}
