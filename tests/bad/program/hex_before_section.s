.format 2.0
.arch easynpu
end
.hex 00ff
