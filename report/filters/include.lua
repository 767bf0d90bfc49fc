-- include.lua — the Pandoc filter of the GEMM Lab report (report/make_report.py passes it).
--
-- 1. A div with an `include` attribute is replaced by a generated block (tables, figures):
--        ::: {include="summary"}
--        :::
--    reads <generated dir>/summary.md. Anything written inside the div is dropped, so keep your
--    own text outside it. Re-running `make report` refreshes the numbers, never your prose.
-- 2. A code block with an `include` attribute shows lines of a file of the repository:
--        ```{.cuda include="student/tiled.cu" lines="10-40"}
--        ```
-- 3. The YAML header's `name`, `student_id` and `course` become the author line and subtitle;
--    `date: today` (or no date) becomes the date of rendering.
--
-- make_report.py sets the metadata `gemmlab-generated` (folder of the generated blocks),
-- `gemmlab-root` (the repository) and `gemmlab-report-dir` (the folder of report.md).

local generated_dir, root_dir, report_dir

local function is_absolute(path)
  return path:sub(1, 1) == "/"
end

local function read_file(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- Images of generated blocks are relative to the generated folder; the student's own images
-- are relative to report.md's folder. LaTeX runs elsewhere, so both become absolute.
local function absolute_images(base)
  return {
    Image = function(img)
      if not is_absolute(img.src) and not img.src:match("^%a+://") then
        img.src = base .. "/" .. img.src
      end
      return img
    end,
  }
end

local function meta_string(meta, key)
  if meta[key] == nil then return nil end
  return pandoc.utils.stringify(meta[key])
end

function Meta(meta)
  generated_dir = meta_string(meta, "gemmlab-generated")
  root_dir = meta_string(meta, "gemmlab-root") or "."
  report_dir = meta_string(meta, "gemmlab-report-dir") or "."
  local name = meta_string(meta, "name")
  local id = meta_string(meta, "student_id")
  if meta.author == nil and name and name ~= "" then
    local author = name
    if id and id ~= "" then author = author .. " (" .. id .. ")" end
    meta.author = pandoc.MetaInlines({ pandoc.Str(author) })
  end
  if meta.subtitle == nil and meta.course ~= nil then
    meta.subtitle = meta.course
  end
  local date = meta_string(meta, "date")
  if date == nil or date == "" or date == "today" then
    meta.date = pandoc.MetaInlines({ pandoc.Str(os.date("%Y-%m-%d")) })
  end
  return meta
end

function Div(div)
  local name = div.attributes["include"]
  if name == nil then return nil end
  if generated_dir == nil then
    error("include.lua: metadata gemmlab-generated is not set (run report/make_report.py)")
  end
  local path = generated_dir .. "/" .. name .. ".md"
  local text = read_file(path)
  if text == nil then
    error("report.md: no generated block '" .. name .. "' (" .. path .. "); " ..
          "report/make_report.py lists the names it knows")
  end
  local doc = pandoc.read(text, "markdown+east_asian_line_breaks")
  local blocks = pandoc.walk_block(pandoc.Div(doc.blocks), absolute_images(generated_dir)).content
  return pandoc.Div(blocks, pandoc.Attr("", { "generated" }, { { "from", name } }))
end

function CodeBlock(block)
  local file = block.attributes["include"]
  if file == nil then return nil end
  local path = is_absolute(file) and file or (root_dir .. "/" .. file)
  local text = read_file(path)
  if text == nil then
    error("report.md: the code block includes " .. file .. ", which does not exist")
  end
  local range = block.attributes["lines"]
  if range then
    local first, last = range:match("^(%d+)%s*%-%s*(%d+)$")
    if not first then
      error("report.md: lines=\"" .. range .. "\" of " .. file .. " is not a range like 10-40")
    end
    first, last = tonumber(first), tonumber(last)
    local kept, n = {}, 0
    for line in (text .. "\n"):gmatch("(.-)\r?\n") do
      n = n + 1
      if n >= first and n <= last then table.insert(kept, line) end
    end
    text = table.concat(kept, "\n")
  end
  block.text = text:gsub("\n+$", "")
  block.attributes["include"] = nil
  block.attributes["lines"] = nil
  if #block.classes == 0 then block.classes = { "cuda" } end
  return block
end

local function student_image(img)
  return absolute_images(report_dir).Image(img)
end

-- Meta first (it sets the folders), then the student's images, then the includes (whose images
-- are made absolute against the generated folder as they are read).
return {
  { Meta = Meta },
  { Image = student_image },
  { Div = Div, CodeBlock = CodeBlock },
}
