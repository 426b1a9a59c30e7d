.format 3.0
.arch easynpu
end
.hex 00ff
