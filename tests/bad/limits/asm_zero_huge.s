end
.section weights
.zero 99999999999999
