.format 1.0
.arch easynpu
end
.hex 00ff
