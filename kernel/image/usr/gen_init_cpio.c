// SPDX-License-Identifier: MIT
/*
 * A host tool, after Linux's usr/gen_init_cpio.c: writes a cpio "newc"
 * archive to stdout from a list of entries, one a line:
 *
 *   dir  <name> <mode> <uid> <gid>
 *   file <name> <location> <mode> <uid> <gid>
 *
 * Reproducible: entries in list order, inode numbers counted from 721 as
 * Linux's, every mtime 0, nlink 1 (2 for directories).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned int offset;
static unsigned int ino = 721;

static void push_pad(void)
{
	while (offset & 3) {
		putchar(0);
		offset++;
	}
}

static void push_hdr(const char *name, unsigned int mode, unsigned int uid,
		     unsigned int gid, unsigned int nlink, unsigned int size)
{
	unsigned int namesize = strlen(name) + 1;

	offset += printf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			 ino++, mode, uid, gid, nlink, 0u, size, 0u, 0u, 0u, 0u,
			 namesize, 0u);
	fwrite(name, 1, namesize, stdout);
	offset += namesize;
	push_pad();
}

int main(int argc, char **argv)
{
	char line[1024], kind[16], name[256], loc[512];
	unsigned int mode, uid, gid;
	FILE *list;

	if (argc != 2 || !(list = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: gen_init_cpio <list>\n");
		return 1;
	}
	while (fgets(line, sizeof(line), list)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "dir %255s %o %u %u", name, &mode, &uid, &gid) == 4) {
			push_hdr(name, 0040000 | mode, uid, gid, 2, 0);
		} else if (sscanf(line, "file %255s %511s %o %u %u", name, loc, &mode, &uid, &gid) == 5) {
			FILE *f = fopen(loc, "rb");
			char *buf;
			long size;

			if (!f) {
				fprintf(stderr, "gen_init_cpio: cannot open %s\n", loc);
				return 1;
			}
			fseek(f, 0, SEEK_END);
			size = ftell(f);
			fseek(f, 0, SEEK_SET);
			buf = malloc(size ? size : 1);
			if (!buf || fread(buf, 1, size, f) != (size_t)size) {
				fprintf(stderr, "gen_init_cpio: cannot read %s\n", loc);
				return 1;
			}
			fclose(f);
			push_hdr(name, 0100000 | mode, uid, gid, 1, size);
			fwrite(buf, 1, size, stdout);
			offset += size;
			push_pad();
			free(buf);
		} else {
			fprintf(stderr, "gen_init_cpio: bad line: %s", line);
			return 1;
		}
	}
	ino = 0;
	push_hdr("TRAILER!!!", 0, 0, 0, 1, 0);
	while (offset % 512) {	/* as cpio, a whole number of blocks */
		putchar(0);
		offset++;
	}
	return 0;
}
