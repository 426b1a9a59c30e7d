.format 3.0
.arch easynpu
end
.section weights
.hex 123
