module splitdbg.test/cgoprog

go 1.26
