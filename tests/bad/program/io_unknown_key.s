.format 3.0
.arch easynpu
end
.io input name="x" dtype=int8 shape=1x4 colour=red
