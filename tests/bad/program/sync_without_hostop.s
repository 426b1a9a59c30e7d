.format 3.0
.arch easynpu
sync
end
