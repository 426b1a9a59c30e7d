/* Private: spellings shared by the disassembler and the assembler. */
#ifndef ENPU_LISTING_H
#define ENPU_LISTING_H

/* "main"/"skip"/"host", "input"/"output"/"host", "any"/"nchw"/"nhwc";
 * NULL for a value without a spelling. */
const char *enpu_listing_mem_name(int mem);
const char *enpu_listing_dir_name(int dir);
const char *enpu_listing_layout_name(int layout);

#endif
