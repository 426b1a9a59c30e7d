.format 1.0
.arch easynpu
end
.section weights
.zero 65552
