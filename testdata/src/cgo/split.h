/* cgo/split.h - C functions called from main.go. */
int c_classify(int x);
long c_accumulate(int n, int cold);
