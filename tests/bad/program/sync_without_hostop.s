.format 2.0
.arch easynpu
sync
end
