.format 3.0
.arch easynpu
end
.section weights
.zero 65552
