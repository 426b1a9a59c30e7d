.format 1.0
.arch easynpu
end
.section weights
.zero 16
.section weights
